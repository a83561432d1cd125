// An output that comes back in another shape than the model declares (onnxmltools declares a
// LightGBM classifier's labels ⟨1⟩ at any batch), in a run's answer (run-panel.js) and in the
// smoke run's verdict (model-panel.js): said, with the fix.
import { el } from "../widgets/dom.js";
import { formatShape } from "../lib/format.js";
import { callout, mono } from "../widgets/ui.js";
import { canEdit } from "../editing/edit-forms.js";

// what a declaration that is wrong breaks
const TRUSTS = "a runtime or caller that trusts the declaration (buffers sized from it, TensorRT) fails.";

/**
 * The callout for one mismatch {output, declared, shape}: "Declare it" sets the output's shape
 * with the dims that differ unknown, the rest as they are (set_io_shape). `when` (optional)
 * says at which sizes it came back so ("with batch at 2"); `named` puts the output's name first;
 * `dim` {name, size}: the one dynamic input dim the run set to `size` — a dim that came back at
 * that size is declared by that name (⟨batch×3⟩), not unknown; `sizes` {dim name: size}: what
 * the run fed, so that a named dim coming back otherwise is said as the model's fault;
 * `madeUp`: the inputs were the smoke run's made-up ones, not a person's.
 * @param {{output: string, declared: Array<number|string|null>, shape: number[]}} m
 * @param {any} ctx @param {{when?: string, named?: boolean, dim?: {name: string, size: number} | null, sizes?: Record<string, number> | null, madeUp?: boolean}} [how]
 */
export function declaredMismatch(m, ctx, { when = "", named = false, dim = null, sizes = null, madeUp = false } = {}) {
  const subjectOf = named ? ["Output ", mono(m.output), " came back "] : ["It came back "];
  // a dim the model names coming back at another size than its input's: the model holds the
  // size it was exported at (a Reshape to [1, -1, 16] folding the batch), no declaration to fix
  const folded = sizes && m.declared.length === m.shape.length
    ? m.declared.filter((d, i) => typeof d === "string" && d in sizes && sizes[d] !== m.shape[i]) : [];
  if (folded.length) {
    return callout("warn", "A named dim comes back at another size",
      el("p", {}, ...subjectOf, `${formatShape(m.shape)}${when ? ` ${when}` : ""}; the model declares ${formatShape(m.declared)}: `,
        `${folded.join(", ")} ${folded.length === 1 ? "is" : "are"} not the size${folded.length === 1 ? "" : "s"} fed. A Reshape, Expand or ConstantOfShape may hold the size it was exported at: its outputs are wrong at any other size.`));
  }
  // a dim that differs becomes unknown, or the input dim it follows when one is known
  const open = (n) => (dim && n === dim.size ? dim.name : null);
  const fixed = m.declared.length === m.shape.length
    ? m.declared.map((d, i) => (typeof d === "number" && d !== m.shape[i] ? open(m.shape[i]) : d))
    : m.shape.map(() => null);
  // a declared size that follows no size fed, on made-up inputs: it may follow their values
  // (a StringSplit of made-up strings came back 2×0 where 2×2 is right: QA34 #5)
  const onValues = madeUp && fixed.some((d, i) => d === null && m.declared[i] !== null);
  if (onValues) return valuesMismatch(m, ctx, subjectOf, when, fixed);
  return callout("warn", "Not the shape the model declares",
    el("p", {}, ...subjectOf, `${formatShape(m.shape)}${when ? ` ${when}` : ""}; the model declares ${formatShape(m.declared)}. onnxruntime only warns, but ${TRUSTS}`),
    declareButton(m, ctx, fixed, "btn btn-small"));
}

/** "Declare it ⟨2×?⟩" (set_io_shape with `fixed`), or null where nothing can be edited. */
function declareButton(m, ctx, fixed, cls, title = "") {
  if (!canEdit(ctx)) return null;
  const fix = el("button", { type: "button", class: `${cls} run-declare`, "data-output": m.output, title: title || null }, `Declare it ${formatShape(fixed)}`);
  fix.addEventListener("click", () => ctx.actions.edit([{ op: "set_io_shape", name: m.output, shape: fixed }]));
  return fix;
}

/** A mismatch the smoke run's made-up inputs may have made: said so, and loosening the
 * declaration offered as a plain link, not as the fix (the declaration may be right). */
function valuesMismatch(m, ctx, subjectOf, when, fixed) {
  const got = formatShape(m.shape);
  const fix = declareButton(m, ctx, fixed, "linklike", `This output's sizes may depend on the values fed: ${got} came from the smoke run's made-up values. `
    + "Declare it so only if real inputs come back in other sizes too.");
  return callout("warn", "Not the shape the model declares, on made-up inputs",
    el("p", {}, ...subjectOf, `${got}${when ? ` ${when}` : ""} on the smoke run's made-up inputs; the model declares ${formatShape(m.declared)}. `,
      "Such a size may follow the values fed (how many pieces a string splits into): run it on real inputs (Run) to know. ",
      `If those too come back otherwise, ${TRUSTS}`),
    fix ? el("p", { class: "declare-loosely" }, fix) : null);
}
