// Entry module of the model list (/): upload by drag-and-drop or file picker, list stored models.
import * as api from "../lib/api.js";
import "../widgets/signed-out.js";
import { el, clear } from "../widgets/dom.js";
import { formatBytes, formatDate, formatNumber, shortDate } from "../lib/format.js";
import { openModal } from "../widgets/modal.js";
import { askModelName } from "../widgets/rename-model.js";
import { breakableFileName } from "../widgets/ui.js";

const dropzone = document.getElementById("dropzone");
const fileInput = /** @type {HTMLInputElement} */ (document.getElementById("file-input"));
const uploadStatus = document.getElementById("upload-status");
const cancelButton = /** @type {HTMLButtonElement} */ (document.getElementById("upload-cancel"));
const modelsStatus = document.getElementById("models-status");
const table = /** @type {HTMLTableElement} */ (document.getElementById("models-table"));
const modelsTotal = document.getElementById("models-total");

function setStatus(node, message, kind = "") {
  node.textContent = message;
  node.className = `status ${kind}`.trim();
}

const KIND_LABEL = {
  model: "model", tensor: "tensor", sequence: "sequence", map: "map", optional: "optional", operator_set: "operator set",
};

const DATA_FILE = /\.(data|bin|weights?|onnx_data|onnx\.data|pb\.data)$/i;

/** The model file goes first; the other parts are its external data files. */
function orderFiles(files) {
  const list = [...files];
  const model = list.find((f) => /\.onnx$/i.test(f.name)) || list.find((f) => !DATA_FILE.test(f.name)) || list[0];
  return [model, ...list.filter((f) => f !== model)];
}

/**
 * The upload was a file the store already holds (the answer's `duplicates`, oldest first):
 * open the stored one instead (the new entry is deleted) or keep the new entry as a copy. A copy
 * still as uploaded is offered before an older one edited since: it is this very file (QA26).
 */
function askAboutDuplicate(summary, fileName) {
  const newName = summary.name || fileName;
  const first = summary.duplicates.find((d) => d.revision === 0) || summary.duplicates[0];
  const firstName = first.name || first.id;
  const more = summary.duplicates.length - 1;
  const error = el("p", { class: "field-error", role: "alert", hidden: true });
  // the stored one may have been edited since: opening it shows its edits, not this file
  const edited = first.revision > 0;
  const openIt = el("button", { type: "button", class: "btn btn-small btn-primary open-existing" }, edited ? `Open it (revision ${first.revision})` : "Open it");
  const keep = el("button", { type: "button", class: "btn btn-small keep-copy" }, "Keep a separate copy");
  const { dialog, body } = openModal({
    id: "duplicate-upload", title: `${newName} is already stored`, actions: [openIt, keep],
    label: `${newName} is already stored`, cls: "modal-confirm", question: true,
  });
  body.append(
    el("p", {}, `This file is already stored as `, el("strong", {}, firstName), ` (uploaded ${formatDate(first.created)}).`
      + (more > 0 ? ` ${more} more ${more === 1 ? "copy is" : "copies are"} stored too.` : "")),
    ...(edited ? [el("p", { class: "duplicate-edited" }, `It has been edited since: it opens at revision ${first.revision}, `
      + "with this file as its revision 0 (History and Compare show what changed). Keep a separate copy to start again from this file.")] : []),
    el("p", { class: "muted" }, "A separate copy takes no more disk space, but it is one more entry in the list, "
      + "with its own history of edits. Close: this upload is not kept."),
    error);
  setStatus(uploadStatus, `${newName} is already stored as ${firstName}.`);
  let decided = false;
  // leaving the page (reload, another address) with the question open backs out too: the dialog
  // said "Close: this upload is not kept", and a closing page fires no close event
  const leaving = () => { if (!decided) api.deleteModelOnLeaving(summary.id); };
  window.addEventListener("pagehide", leaving);
  // Closing the dialog (Close, Escape, a click on the backdrop) backs out of the upload: the new
  // entry goes (the stored one holds the same bytes), the page stays on the list
  dialog.addEventListener("close", async () => {
    window.removeEventListener("pagehide", leaving);
    if (decided) return;
    try {
      await api.deleteModel(summary.id);
      setStatus(uploadStatus, `Not stored again: ${newName} is the same file as ${firstName}.`);
    } catch (err) {
      setStatus(uploadStatus, `Could not remove the new copy of ${newName}: ${err.message}`, "error");
    }
    loadModels();
  });
  openIt.addEventListener("click", async () => {
    decided = true;
    openIt.disabled = true;
    keep.disabled = true;
    try {
      await api.deleteModel(summary.id);
    } catch (err) {
      decided = false;
      const message = `Could not remove the new copy of ${newName}: ${err.message}`;
      if (dialog.open) {
        error.textContent = message;
        error.hidden = false;
        openIt.disabled = false;
        keep.disabled = false;
      } else { // closed while the delete was under way: say it on the page
        setStatus(uploadStatus, message, "error");
        loadModels();
      }
      return;
    }
    setStatus(uploadStatus, `Opened ${firstName}.`, "ok");
    window.location.assign(api.modelPageUrl(first.id));
  });
  keep.addEventListener("click", () => {
    decided = true;
    setStatus(uploadStatus, `Opened ${newName}.`, "ok");
    rememberUploadNote(summary); // what else the upload did (cases kept, members left out): said there too (QA35 #9)
    window.location.assign(api.modelPageUrl(summary.id));
  });
}

let uploading = false;
/** The names the models list shows (an upload of one of them is told where to rename it). */
let listedNames = new Set();
/** What the upload did besides storing the model (a zoo archive's test data sets kept as
 * reference cases, or why not), for the model page to say once it opens. */
function rememberUploadNote(summary) {
  const sets = summary.test_data_sets || { kept: [], skipped: [] };
  const kept = sets.kept.length ? `Kept ${sets.kept.join(", ")} as reference case${sets.kept.length > 1 ? "s" : ""}: every revision is held to their outputs.` : "";
  const skipped = sets.skipped.map((s) => `${s.name} not kept: ${s.reason}`).join(" · ");
  // an archive's members never unpacked (a path leaving it, a link): said, not silently dropped
  const members = summary.left_out || [];
  const more = (summary.left_out_count || members.length) - members.length;
  const left = members.length ? `Left out of the archive: ${members.map((m) => `${m.name} (${m.why})`).join(", ")}${more > 0 ? ` and ${more} more` : ""}.` : "";
  // a name others in the list bear (every exporter's "model.onnx"): where to give it its own
  const namesake = listedNames.has(summary.name) ? `Listed as ${summary.name}, as another model is: click its name at the top to give it one of its own.` : "";
  const message = [kept, skipped, left, namesake].filter(Boolean).join(" ");
  if (!message) return;
  try {
    sessionStorage.setItem(`upload-note:${summary.id}`, JSON.stringify({ message, problem: !!(skipped || left) }));
  } catch { /* storage off: the model panel still lists the cases */ }
}

/** An archive holding several models (an export folder: encoder_model.onnx, decoder_model.onnx …):
 * a button per model, each uploading the archive again naming that one (its `member`). */
function offerModels(archive, models) {
  setStatus(uploadStatus, `${archive.name} holds several models. Pick the one to open:`);
  uploadStatus.append(el("div", { class: "member-choices" }, ...models.map((path) => el("button", {
    type: "button", class: "btn btn-small open-member", onclick: () => upload([archive], path),
  }, `Open ${path}`))));
}

/** Upload the files dropped or picked; `member`: which model of an archive to open. */
async function upload(files, member = null) {
  if (!files || !files.length || uploading) return;
  uploading = true;
  const ordered = orderFiles(files);
  dropzone.classList.add("busy");
  const extra = ordered.length > 1 ? ` with ${ordered.length - 1} data file${ordered.length > 2 ? "s" : ""}` : "";
  const what = member === null ? ordered[0].name : `${member} from ${ordered[0].name}`;
  setStatus(uploadStatus, `Uploading ${what}${extra}…`);
  const controller = new AbortController();
  cancelButton.onclick = () => controller.abort();
  cancelButton.hidden = false;
  try {
    const summary = await api.uploadModel(ordered, (fraction) => {
      const pct = Math.round(fraction * 100);
      setStatus(uploadStatus, pct < 100 ? `Uploading ${what}${extra}… ${pct}%` : `Reading ${what}…`);
      // every byte sent: the server is storing it, and a cancel now would not undo that
      if (pct >= 100) cancelButton.hidden = true;
    }, member, controller.signal);
    if (summary.duplicates && summary.duplicates.length) {
      askAboutDuplicate(summary, ordered[0].name);
      return;
    }
    setStatus(uploadStatus, `Opened ${summary.name || ordered[0].name}.`, "ok");
    rememberUploadNote(summary);
    window.location.assign(api.modelPageUrl(summary.id));
  } catch (err) {
    if (err.code === "cancelled") {
      setStatus(uploadStatus, `Upload of ${what} cancelled: nothing was stored.`);
      dropzone.focus();
      return;
    }
    if (err.code === "several_models" && err.models && err.models.length) {
      offerModels(ordered[0], err.models);
      return;
    }
    const message = String(err.message || err);
    // the server's message names the file already ("x.onnx is not a readable ONNX model…")
    setStatus(uploadStatus, message.startsWith(ordered[0].name) ? message : `Could not open ${ordered[0].name}: ${message}`, "error");
  } finally {
    uploading = false;
    cancelButton.hidden = true;
    cancelButton.onclick = null;
    dropzone.classList.remove("busy");
    fileInput.value = "";
  }
}

fileInput.addEventListener("change", () => upload(fileInput.files));
for (const type of ["dragenter", "dragover"]) {
  dropzone.addEventListener(type, (/** @type {DragEvent} */ e) => {
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
    dropzone.classList.add("dragging");
  });
}
for (const type of ["dragleave", "dragend"]) {
  dropzone.addEventListener(type, (e) => {
    if (e.target === dropzone) dropzone.classList.remove("dragging");
  });
}
dropzone.addEventListener("drop", (e) => {
  e.preventDefault();
  dropzone.classList.remove("dragging");
  upload(e.dataTransfer.files);
});
// a file dropped anywhere else on the page should not replace the page
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => e.preventDefault());
dropzone.addEventListener("keydown", (e) => {
  if (e.key === "Enter" || e.key === " ") { e.preventDefault(); fileInput.click(); }
});

/** Whether the model's current revision gives its reference cases' outputs (once checked). */
function referenceTag(status) {
  if (status !== "passed" && status !== "failed") return null;
  return el("span", {
    class: `badge badge-reference ${status === "passed" ? "badge-ok" : "badge-warn"}`,
    title: status === "passed" ? "Its current revision gives the outputs of its reference cases" : "Its current revision does not give the outputs of its reference cases",
  }, status === "passed" ? "outputs as kept" : "outputs differ");
}

/** A model whose current revision onnx's checker refuses (once checked), as its page's badge says it. */
function validityTag(valid) {
  if (valid !== false) return null;
  return el("span", { class: "badge badge-invalid badge-warn", title: "onnx's checker refuses its current revision: open it to see why" }, "checker errors");
}

/** A model whose external data files were not all uploaded (once its page looked), as its page says it. */
function missingTag(missing) {
  if (!missing) return null;
  return el("span", { class: "badge badge-missing badge-warn", title: `${missing} external data file${missing === 1 ? "" : "s"} it names ${missing === 1 ? "was" : "were"} not uploaded: open it to attach ${missing === 1 ? "it" : "them"}` }, "weights missing");
}

/** The blob store lost some of the model's data (restored from an older backup than the index). */
function damagedTag(damaged) {
  if (!damaged) return null;
  return el("span", { class: "badge badge-bad badge-damaged", title: damaged }, "data missing");
}

/** Who made the model, its opset and size as a muted line under its name: "pytorch 2.1 · opset 17 · 1,250 nodes". */
function cardText(card) {
  if (!card || !Object.keys(card).length) return "";
  // a model of ai.onnx.ml operators only (an XGBoost export) says whose opset it gives
  const opset = card.opset ? `${card.opset_domain ? `${card.opset_domain} ` : ""}opset ${card.opset}` : null;
  return [card.producer, opset, `${formatNumber(card.nodes || 0)} node${card.nodes === 1 ? "" : "s"}`]
    .filter(Boolean).join(" · ");
}

const filter = /** @type {HTMLInputElement} */ (document.getElementById("models-filter"));

/** What the filter finds a model by: its name and id, its card (producer, opset, operators,
 * metadata as key=value), who uploaded it and who last edited it (QA26). */
function searchText(m, card) {
  const c = m.card || {};
  const metadata = Object.entries(c.metadata || {}).map(([k, v]) => `${k}=${v}`);
  return [m.name || "", m.id, card, ...(c.ops || []), ...metadata, m.created_by || "", m.edited_by || "", m.moved?.by || ""].join(" ");
}
let shown = { count: 0, diskBytes: /** @type {number | undefined} */ (undefined), otherBytes: 0 };

/** Show the rows whose name (or id) holds the filter's words, each of them, in any case. */
function applyFilter() {
  const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
  let matching = 0;
  for (const row of table.tBodies[0].rows) {
    const text = (row.dataset.search || "").toLowerCase();
    row.hidden = !words.every((w) => text.includes(w));
    if (!row.hidden) matching += 1;
  }
  showTotal(shown.count, shown.diskBytes, shown.otherBytes, words.length ? matching : null);
}

async function loadModels() {
  setStatus(modelsStatus, "Loading…");
  try {
    const { models, disk_bytes: diskBytes, other_bytes: otherBytes } = await api.listModels();
    const body = table.tBodies[0];
    clear(body);
    const named = new Map();
    for (const m of models || []) named.set(m.name, (named.get(m.name) || 0) + 1);
    listedNames = new Set(named.keys());
    for (const m of models || []) {
      const card = cardText(m.card);
      // models of one name (the same export uploaded again, edited apart) told apart by their id
      const twin = named.get(m.name) > 1 ? el("span", { class: "muted model-twin mono", title: "Other stored models have this name: this one's id" }, ` ${m.id}`) : null;
      const by = (who) => (who ? el("div", { class: "muted date-by" }, `by ${who}`) : null);
      body.append(el("tr", {
        "data-model-id": m.id,
        "data-search": searchText(m, card),
        ...sortData(m),
      },
        el("td", {}, el("a", { href: api.modelPageUrl(m.id), class: "model-link", title: `model ${m.id}` }, breakableFileName(m.name || m.id)), twin, validityTag(m.valid), missingTag(m.missing_data), damagedTag(m.damaged), referenceTag(m.reference),
          card ? el("div", { class: "muted model-card" }, card) : null),
        el("td", { class: "kind-cell" }, el("span", { class: `kind-badge kind-${m.kind || "model"}` }, KIND_LABEL[m.kind] || m.kind || "model")),
        el("td", { class: "num" }, String(m.revision ?? "")),
        el("td", { class: "num" }, formatBytes(m.size)),
        el("td", { class: "num" }, formatBytes(m.disk_bytes)),
        // short dates ("6 Dec, 20:16"; the year when not this one), the full one in the title
        el("td", { class: "muted date-cell", title: formatDate(m.created) }, shortDate(m.created), by(m.created_by)),
        el("td", { class: "muted date-cell edited-cell", title: m.revision ? formatDate(m.edited) : "" },
          ...(m.revision ? [shortDate(m.edited), by(m.edited_by)] : ["not edited"]), movedLine(m.moved)),
        el("td", { class: "actions-cell" },
          el("button", { type: "button", class: "btn btn-small btn-ghost rename-model", "aria-label": `Rename ${m.name || m.id}`, onclick: () => askRename(m) }, "Rename"),
          el("button", { type: "button", class: "btn btn-small btn-ghost delete-model", "aria-label": `Delete ${m.name || m.id}`, onclick: () => confirmDelete(m) }, "Delete"))));
    }
    sortRows();
    table.hidden = !(models && models.length);
    shown = { count: models && models.length ? models.length : 0, diskBytes, otherBytes: otherBytes || 0 };
    filter.hidden = shown.count < FILTER_FROM;
    applyFilter();
    setStatus(modelsStatus, models && models.length ? "" : "No models yet — open one above.");
  } catch (err) {
    table.hidden = true;
    modelsTotal.hidden = true;
    setStatus(modelsStatus, `Could not list the models: ${err.message}`, "error");
  }
}

// ------------------------------------------------------------------ sorting the list (QA26)

/** Who last moved the head by an undo or a redo, and when: the edited date is its revision's,
 * its author another than who pressed Undo (QA38 #10, on the list as in History). */
function movedLine(moved) {
  if (!moved) return null;
  const what = moved.how === "redo" ? `redone to revision ${moved.to}` : `undone from revision ${moved.from}`;
  return el("div", { class: "muted date-by date-moved", title: formatDate(moved.at) },
    `${what}${moved.by ? ` by ${moved.by}` : ""}, ${shortDate(moved.at)}`);
}

/** The values a row sorts by, as data-sort-* attributes (a model never edited sorts by its upload;
 * an undo or a redo counts as an edit of when it was pressed). */
function sortData(m) {
  return {
    "data-sort-name": (m.name || m.id).toLowerCase(),
    "data-sort-revision": String(m.revision ?? 0),
    "data-sort-size": String(m.size ?? -1),
    "data-sort-stored": String(m.disk_bytes ?? -1),
    "data-sort-uploaded": String(m.created ?? 0),
    "data-sort-edited": String(Math.max(m.edited ?? m.created ?? 0, m.moved?.at ?? 0)),
  };
}

const SORT_KEY = "onnx-studio.models-sort"; // the order chosen, kept for the next visit
let sorting = { key: "uploaded", descending: true }; // the server's order: newest upload first
try { sorting = { ...sorting, ...JSON.parse(localStorage.getItem(SORT_KEY) || "{}") }; } catch { /* none kept */ }

/** Order the rows by the chosen column, and say so on its header (aria-sort). */
function sortRows() {
  const { key, descending } = sorting;
  const body = table.tBodies[0];
  const value = (row) => row.dataset[`sort${key[0].toUpperCase()}${key.slice(1)}`] || "";
  const rows = [...body.rows].sort((a, b) => {
    const [x, y] = [value(a), value(b)];
    const order = key === "name" ? x.localeCompare(y) : Number(x) - Number(y);
    return descending ? -order : order;
  });
  body.append(...rows);
  for (const th of table.tHead.querySelectorAll("th[data-sort]")) {
    const on = th.getAttribute("data-sort") === key;
    if (on) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    else th.removeAttribute("aria-sort");
  }
}

for (const th of table.tHead.querySelectorAll("th[data-sort]")) {
  th.querySelector("button").addEventListener("click", () => {
    const key = th.getAttribute("data-sort") || "uploaded";
    // a new column starts where a person looks first: names A→Z, the rest biggest or newest first
    sorting = { key, descending: sorting.key === key ? !sorting.descending : key !== "name" };
    try { localStorage.setItem(SORT_KEY, JSON.stringify(sorting)); } catch { /* this visit only */ }
    sortRows();
  });
}

// a filter box once the list is longer than a glance takes in
const FILTER_FROM = 8;

/** The line under the table: how many models (of them, how many the filter shows), and what
 * the store (a folder, or an S3 bucket) takes in all. */
function showTotal(count, diskBytes, otherBytes, matching = null) {
  modelsTotal.hidden = count === 0;
  if (!count) return;
  // besides the models: files uploaded for a tool or a run, and deleted models' blobs until collected
  const other = otherBytes > 0 ? `, ${formatBytes(otherBytes)} of it held by no model` : "";
  // none while the blob store can't be reached: the list is the index's, the sizes the store's
  const disk = typeof diskBytes === "number" ? ` · ${formatBytes(diskBytes)} stored${other}` : " · the storage can't be reached just now: sizes unknown";
  const of = matching === null ? "" : `${matching} of `;
  modelsTotal.textContent = `${of}${count} model${count === 1 ? "" : "s"}${disk}`;
  modelsTotal.title = "Weights shared by models (a copy, an edited revision) are stored once, "
    + "so the models' part can be less than the sum of the Stored column. Held by no model: calibration "
    + "and test data given to a tool or a run, and the files of deleted models until the store collects them "
    + "(ten minutes after they were last stored).";
}

/** A new name for a model, then the list again. */
function askRename(m) {
  const name = m.name || m.id;
  askModelName(m, async (now) => {
    const taken = now !== name && listedNames.has(now); // as an upload of a listed name is told (QA35 #9)
    await loadModels();
    setStatus(modelsStatus, `Renamed ${name} to ${now}${taken ? ", which another model is named too: they are told apart by their ids" : ""}.`, "ok");
  });
}

/** Ask first, then delete a model with every revision of it. */
function confirmDelete(m) {
  const name = m.name || m.id;
  const error = el("p", { class: "field-error", role: "alert", hidden: true });
  const yes = el("button", { type: "button", class: "btn btn-small btn-danger confirm-delete" }, "Delete");
  const { dialog, body } = openModal({
    id: "delete-model", title: `Delete ${name}?`, actions: [yes], label: `Delete ${name}`, cls: "modal-confirm", question: true,
  });
  body.append(
    el("p", {}, `${name} and its whole history of edits will be removed from this server. `
      + "Download what you want to keep first: this can't be undone."),
    error);
  // the safe answer has the focus: Enter, Enter must not remove a model and its history
  /** @type {HTMLElement | null} */ (dialog.querySelector(".modal-close"))?.focus();
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    try {
      await api.deleteModel(m.id);
      dialog.close();
      await loadModels();
      setStatus(modelsStatus, `Deleted ${name}.`, "ok");
    } catch (err) {
      error.textContent = `Could not delete ${name}: ${err.message}`;
      error.hidden = false;
      yes.disabled = false;
    }
  });
}

document.getElementById("refresh-models").addEventListener("click", loadModels);
filter.addEventListener("input", applyFilter);
loadModels();
