// Samples for several graph inputs in one file: an .npz (numpy.savez, an array per input, named
// after it) uploaded once with POST /api/blobs, which stores each array as a blob of its own.

/**
 * The blobs of an uploaded .npz for those of the graph inputs `names` it holds: {input: blob};
 * an Error when it is an .npy, or holds none of them.
 * @param {(file: File) => Promise<any>} upload the page's uploadBlob
 * @param {File} file
 * @param {string[]} names
 * @param {Map<string, number[]> | null} [shapes] filled with each found input's shape
 * @returns {Promise<Record<string, string>>}
 */
export async function inputsFromNpz(upload, file, names, shapes = null) {
  const answer = await upload(file);
  if (!answer.arrays) throw new Error(`${file.name} is one array: an .npz holds one per input (numpy.savez(path, ${names.map((n) => `${n}=…`).join(", ")})).`);
  const found = names.filter((n) => n in answer.arrays);
  if (!found.length) throw new Error(`${file.name} holds ${Object.keys(answer.arrays).join(", ")}: none is named after an input (${names.join(", ")}).`);
  if (shapes) for (const n of found) shapes.set(n, answer.arrays[n].shape);
  return Object.fromEntries(found.map((n) => [n, answer.arrays[n].blob]));
}

/** The k of "input_k.pb" / "output_k.pb", or -1. */
const indexOf = (file, kind) => {
  const m = new RegExp(`^${kind}_(\\d+)\\.pb$`, "i").exec(file.name);
  return m ? Number(m[1]) : -1;
};

/**
 * An ONNX test data set (the input_k.pb and output_k.pb files of a test_data_set_N folder), each
 * TensorProto uploaded: {inputs: {input: blob}, expected: {output: blob}}. A file goes to the
 * input or output its tensor is named after, else to the k-th one; an Error names a file that
 * fits neither.
 * @param {(file: File) => Promise<any>} upload the page's uploadBlob
 * @param {File[]} files
 * @param {string[]} inputs the graph's inputs (without initializers), in order
 * @param {string[]} outputs the graph's outputs, in order
 * @returns {Promise<{inputs: Record<string, string>, expected: Record<string, string>}>}
 */
export async function fromTestDataSet(upload, files, inputs, outputs) {
  const found = { inputs: {}, expected: {} };
  for (const file of files) {
    const kind = indexOf(file, "input") >= 0 ? "input" : indexOf(file, "output") >= 0 ? "output" : null;
    if (!kind) throw new Error(`${file.name}: a test data set's files are input_0.pb, input_1.pb, …, output_0.pb, …`);
    const names = kind === "input" ? inputs : outputs;
    const answer = await upload(file);
    const name = names.includes(answer.name) ? answer.name : names[indexOf(file, kind)];
    if (!name) throw new Error(`${file.name} (tensor ${JSON.stringify(answer.name || "")}) matches no ${kind} of the model (${names.join(", ")}).`);
    found[kind === "input" ? "inputs" : "expected"][name] = answer.blob;
  }
  return found;
}

/** The output a .npy file is named after: "logits.npy", or "<anything>.logits.npy" /
 * "<anything>_logits.npy" (torch_out.logits.npy); the one output when there is one. */
function outputOf(file, outputs) {
  const stem = file.name.replace(/\.npy$/i, "");
  const named = [...outputs].sort((a, b) => b.length - a.length) // "present.0.key" before "key"
    .find((o) => stem === o || stem.endsWith(`.${o}`) || stem.endsWith(`_${o}`));
  return named ?? (outputs.length === 1 ? outputs[0] : null);
}

/**
 * The values the outputs should have, from .npy files named after them (what a framework's
 * outputs saved with numpy.save are) or one .npz of arrays named after them, each uploaded:
 * {output: blob}. An Error names a file that names no output.
 * @param {(file: File) => Promise<any>} upload the page's uploadBlob
 * @param {File[]} files
 * @param {string[]} outputs the graph's outputs
 * @returns {Promise<Record<string, string>>}
 */
export async function expectedFromFiles(upload, files, outputs) {
  const expected = {};
  for (const file of files) {
    if (/\.npz$/i.test(file.name)) {
      Object.assign(expected, await inputsFromNpz(upload, file, outputs).catch((err) => {
        throw new Error(err.message.replace("named after an input", "named after an output").replace("one per input", "one per output"));
      }));
      continue;
    }
    const output = outputOf(file, outputs);
    if (!output) throw new Error(`${file.name} names no output of this model (${outputs.join(", ")}): name it <output>.npy`);
    expected[output] = (await upload(file)).blob;
  }
  return expected;
}
