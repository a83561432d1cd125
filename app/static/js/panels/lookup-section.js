// A lookup node's table (ai.onnx.ml's LabelEncoder, OneHotEncoder, CategoryMapper, DictVectorizer;
// TfIdfVectorizer): which category becomes which code or column, read off the parallel lists its
// attributes hold (keys_strings beside values_int64s…), which side by side no one can read.
// A filter finds one category among thousands.
import { el, clear } from "../widgets/dom.js";
import { formatInteger, formatNumber } from "../lib/format.js";
import { mono, section } from "../widgets/ui.js";

const ROWS_SHOWN = 50;

function attrs(node) {
  return Object.fromEntries((node.attributes || []).map((a) => [a.name, a]));
}

function list(a, ...names) {
  const found = names.map((n) => a[n]).find((x) => x && Array.isArray(x.value) && x.value.length);
  return found ? { values: found.value, total: found.truncated ?? found.value.length } : null;
}

/** TfIdfVectorizer's pool as n-grams: group g (from ngram_counts[g]) holds (g+1)-item n-grams. */
function ngrams(a) {
  const pool = list(a, "pool_strings", "pool_int64s");
  const counts = a.ngram_counts ? a.ngram_counts.value : [0];
  const indexes = a.ngram_indexes ? a.ngram_indexes.value : [];
  if (!pool || pool.total !== pool.values.length) return null; // a cut pool can't be regrouped
  const keys = [];
  counts.forEach((start, g) => {
    const end = g + 1 < counts.length ? counts[g + 1] : pool.values.length;
    for (let i = start; i + g + 1 <= end; i += g + 1) keys.push(pool.values.slice(i, i + g + 1).join(" "));
  });
  return { keys, values: indexes.slice(0, keys.length), total: keys.length };
}

/** {headings, keys, values, total} of the node's lookup, or null when it holds none we read. */
export function lookupOf(node) {
  if (node.domain !== "ai.onnx.ml" && !(node.op_type === "TfIdfVectorizer" && !node.domain)) return null;
  const a = attrs(node);
  const positions = (l) => l.values.map((_, i) => i);
  switch (node.op_type) {
    case "LabelEncoder": {
      const keys = list(a, "keys_strings", "keys_int64s", "keys_floats");
      const values = list(a, "values_strings", "values_int64s", "values_floats");
      if (keys && values) return { headings: ["key", "value"], keys: keys.values, values: values.values, total: keys.total };
      const classes = list(a, "classes_strings"); // opset 1: a string's code is its position
      return classes ? { headings: ["class", "code"], keys: classes.values, values: positions(classes), total: classes.total } : null;
    }
    case "CategoryMapper": {
      const strings = list(a, "cats_strings");
      const ints = list(a, "cats_int64s");
      return strings && ints ? { headings: ["string", "integer"], keys: strings.values, values: ints.values, total: strings.total } : null;
    }
    case "OneHotEncoder": {
      const cats = list(a, "cats_strings", "cats_int64s");
      return cats ? { headings: ["category", "column"], keys: cats.values, values: positions(cats), total: cats.total } : null;
    }
    case "DictVectorizer": {
      const vocab = list(a, "string_vocabulary", "int64_vocabulary");
      return vocab ? { headings: ["key", "column"], keys: vocab.values, values: positions(vocab), total: vocab.total } : null;
    }
    case "TfIdfVectorizer": {
      const grams = ngrams(a);
      return grams ? { headings: ["n-gram", "column"], ...grams } : null;
    }
    default:
      return null;
  }
}

const shown = (v) => (typeof v === "number" ? formatNumber(v) : String(v));

/** The "Lookup" section: the table, a filter over its keys. */
export function lookupSection(lookup) {
  const filter = /** @type {HTMLInputElement} */ (el("input", { type: "search", class: "lookup-filter", placeholder: `Find a ${lookup.headings[0]}`, "aria-label": `Find a ${lookup.headings[0]}` }));
  const body = el("tbody");
  const note = el("p", { class: "muted lookup-note" });
  const fill = () => {
    const q = filter.value.trim().toLowerCase();
    const rows = [];
    let matched = 0;
    lookup.keys.forEach((k, i) => {
      if (q && !shown(k).toLowerCase().includes(q)) return;
      matched += 1;
      if (rows.length < ROWS_SHOWN) rows.push(el("tr", {}, el("td", {}, mono(shown(k))), el("td", { class: "num" }, i < lookup.values.length ? shown(lookup.values[i]) : "—")));
    });
    clear(body);
    body.append(...rows);
    const cut = lookup.total > lookup.keys.length ? ` (the first ${formatInteger(lookup.keys.length)} of ${formatInteger(lookup.total)} read)` : "";
    note.textContent = q
      ? `${formatInteger(matched)} match${matched === 1 ? "" : "es"}${matched > rows.length ? `, the first ${rows.length} shown` : ""}${cut}`
      : `${formatInteger(lookup.total)} entries${lookup.keys.length > rows.length ? `, the first ${rows.length} shown` : ""}${cut}`;
  };
  filter.addEventListener("input", fill);
  fill();
  return section("Lookup", el("div", { id: "node-lookup" }, filter,
    el("table", { class: "coef-features lookup-table" }, el("thead", {}, el("tr", {}, el("th", {}, lookup.headings[0]), el("th", { class: "num" }, lookup.headings[1]))), body),
    note));
}
