// Samples for several graph inputs in one file: an .npz (numpy.savez, an array per input, named
// after it) uploaded once with POST /api/blobs, which stores each array as a blob of its own.

/**
 * The blobs of an uploaded .npz for those of the graph inputs `names` it holds: {input: blob};
 * an Error when it is an .npy, or holds none of them.
 * @param {(file: File) => Promise<any>} upload the page's uploadBlob
 * @param {File} file
 * @param {string[]} names
 * @returns {Promise<Record<string, string>>}
 */
export async function inputsFromNpz(upload, file, names) {
  const answer = await upload(file);
  if (!answer.arrays) throw new Error(`${file.name} is one array: an .npz holds one per input (numpy.savez(path, ${names.map((n) => `${n}=…`).join(", ")})).`);
  const found = names.filter((n) => n in answer.arrays);
  if (!found.length) throw new Error(`${file.name} holds ${Object.keys(answer.arrays).join(", ")}: none is named after an input (${names.join(", ")}).`);
  return Object.fromEntries(found.map((n) => [n, answer.arrays[n].blob]));
}
