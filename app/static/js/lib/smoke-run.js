// The smoke run in words, one home for the toolbar's badge, the history's tags and the model
// panel: "smoke run" is our word, which a newcomer does not know (QA34 #11).

/** What the smoke run is: the one run onnxruntime makes of every revision, on inputs made up. */
export const SMOKE_RUN = "onnxruntime runs the model once on inputs the check makes up: "
  + "dynamic dims of 1 to 1,024 (the batch also at 1 alone), integers 0, 1, 2, 3…";

/** A badge's or tag's title for a smoke run that fails (`message`: onnxruntime's words). */
export function smokeRunFailsTitle(message) {
  return `Smoke run: ${SMOKE_RUN}. It fails: ${message || "no message"}. `
    + "onnx's checks accept the model and onnxruntime loads it; the inputs made up may be what it can't take: Run it on real ones to know.";
}
