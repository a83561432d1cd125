// The drawing's colours and fonts. app.css declares them once, as custom properties of :root
// (--g-*); the SVG drawing takes them through its classes (fill: var(--g-edge), font:
// var(--g-font-op)). What is drawn or measured from JS — the canvas renderer, the minimap, the
// SVG and PNG exports, the group panel's bar, graph-model.js's text widths — reads them here:
// on first use, from the page's computed style, into a frozen object; again when the page turns
// dark or light (pages/scheme-choice.js: the person's choice or the system's), after which
// onThemeChange's listeners redraw what they drew. Exports keep the light palette (withExportTheme). A key is its
// variable's name in camelCase: boxStroke <- --g-box-stroke, font.ioName <- --g-font-io-name,
// ink.refOut <- --g-ink-ref-out, cat.conv <- --g-cat-conv, catHead.conv <- --g-cat-conv-head.

/** Op categories (graph-model.js opCategory), in the order of a group's stripe. */
export const CATEGORY_ORDER = ["conv", "matmul", "activation", "norm", "pool", "control", "quant", "shape", "math", "custom", "other"];

/** Steps of the heat map (costs: FLOPs, params, output size, memory alive), lightest first: `heat-<k>` box classes. */
export const HEAT_STEPS = 6;
// the dash of an edge a node's subgraphs read (an If's branches reading the model's input)
export const IMPLICIT_DASH = Object.freeze([5, 4]);
/** Every heat class, weakest first: no cost at all, a cost nobody knows, then `heat-<k>`. */
export const HEAT_CLASSES = ["heat-zero", "heat-unknown", ...Array.from({ length: HEAT_STEPS }, (_, k) => `heat-${k}`)];

/** Kinds of text line (graph-model.js line.font; SVG class t-<kind>): each has a font and a colour (ink). */
export const TEXT_KINDS = ["op", "name", "attr", "init", "more", "sub", "ref", "refOut", "ioName", "ioType", "caption", "edge", "group", "count", "frame"];

// Every other colour the JS draws with, with what stands in when app.css lacks its variable
// (with a console warning): plain values that keep a drawing readable, not the theme's.
const COLORS = {
  background: "#ffffff", boxFill: "#ffffff", boxStroke: "#999999", selected: "#0000ff", trace: "#ff8800", error: "#ff0000",
  diffAdded: "#00aa00", diffChanged: "#ff8800", edge: "#999999", inputFill: "#ffffff", inputStroke: "#999999", outputFill: "#ffffff", outputStroke: "#999999",
  outerFill: "#ffffff", outerStroke: "#999999", groupStack: "#eeeeee", groupHead: "#eeeeee", groupFar: "#999999",
  toggleFill: "#ffffff", toggleStroke: "#999999", toggleIcon: "#666666",
  frameFill1: "rgba(0, 0, 0, .04)", frameFill2: "rgba(0, 0, 0, .02)", frameFill3: "rgba(0, 0, 0, .04)", frameFill4: "rgba(0, 0, 0, .02)",
  frameStroke: "#cccccc", frameTab: "#ffffff", frameTabSelected: "#eeeeff", frameToggleFill: "#ffffff",
  farLabelHalo: "rgba(255, 255, 255, .85)", minimapFill: "#ffffff", minimapWindow: "#0000ff", minimapWindowFill: "rgba(0, 0, 255, .1)",
};
const FALLBACK = { font: "12px sans-serif", ink: "#222222", cat: "#999999", catHead: "#eeeeee" };

/**
 * @typedef {Readonly<Record<keyof typeof COLORS, string>> & {
 *   font: Readonly<Record<string, string>>, ink: Readonly<Record<string, string>>,
 *   cat: Readonly<Record<string, string>>, catHead: Readonly<Record<string, string>>,
 *   frameFill: readonly string[], heat: Readonly<Record<string, string>>,
 * }} Theme
 * font: the canvas font of each text kind; ink: its colour; cat: the strong colour of each op
 * category (group stripes, minimap, boxes far out); catHead: a node box's head by category;
 * frameFill: an expanded group's body by depth (index 1-4, 0 as 1); heat: a box's head by heat class.
 */

/** @type {Theme | null} */
let current = null;
/** @type {Theme | null} */
let exportTheme = null;
/** @type {Set<() => void>} */
const listeners = new Set();

/** The drawing's theme, read from app.css on the first call (and after a change of scheme). @returns {Theme} */
export function theme() {
  if (!current) current = readTheme(typeof document === "undefined" ? null : document.documentElement);
  return current;
}

/** Call `redraw` after the page's colour scheme changed (the theme is read again by then). */
export function onThemeChange(redraw) {
  listeners.add(redraw);
}

// pages/scheme-choice.js: the palette changed (the person's choice, or the system's while it is followed)
if (typeof window !== "undefined") {
  window.addEventListener("studio:scheme", () => {
    current = null;
    for (const redraw of listeners) redraw();
  });
}

/**
 * `draw()` with theme() answering the light palette whatever the page's scheme: an exported
 * drawing goes into documents, which are light. app.css gives that palette to an element of
 * class export-palette; one is put in the page for as long as it takes to read it.
 * @template T @param {() => T} draw @returns {T}
 */
export function withExportTheme(draw) {
  if (!exportTheme) {
    const probe = document.createElement("div");
    probe.className = "export-palette";
    probe.hidden = true;
    document.body.append(probe);
    exportTheme = readTheme(probe);
    probe.remove();
  }
  const shown = current;
  current = exportTheme;
  try {
    return draw();
  } finally {
    current = shown;
  }
}

const kebab = (key) => key.replace(/([a-z])([A-Z0-9])/g, "$1-$2").toLowerCase();

/** The theme as element `from` (the page's root, or the export palette's) sees app.css. @param {Element | null} from @returns {Theme} */
function readTheme(from) {
  const style = from ? getComputedStyle(from) : null;
  const missing = [];
  const read = (name, fallback) => {
    const value = style ? style.getPropertyValue(name).trim() : "";
    if (value) return value;
    missing.push(name);
    return fallback;
  };
  const table = (keys, name, fallback) => Object.freeze(Object.fromEntries(keys.map((k) => [k, read(name(k), fallback)])));
  const colors = Object.fromEntries(Object.entries(COLORS).map(([k, fallback]) => [k, read(`--g-${kebab(k)}`, fallback)]));
  const t = /** @type {Theme} */ (Object.freeze({
    ...colors,
    font: table(TEXT_KINDS, (k) => `--g-font-${kebab(k)}`, FALLBACK.font),
    ink: table(TEXT_KINDS, (k) => `--g-ink-${kebab(k)}`, FALLBACK.ink),
    cat: table(CATEGORY_ORDER, (c) => `--g-cat-${c}`, FALLBACK.cat),
    catHead: table(CATEGORY_ORDER, (c) => `--g-cat-${c}-head`, FALLBACK.catHead),
    heat: Object.freeze(Object.fromEntries(HEAT_CLASSES.map((c) => [c, read(`--g-${c}`, "#eeeeee")]))),
    frameFill: Object.freeze([colors.frameFill1, colors.frameFill1, colors.frameFill2, colors.frameFill3, colors.frameFill4]),
  }));
  if (missing.length) {
    console.warn(`The drawing's theme: ${missing.length} variable(s) missing from app.css :root, plain defaults used: ${missing.join(", ")}`);
  }
  return t;
}

/** The strong colour of an op category (group stripes, minimap, boxes far out). */
export function categoryColor(cat) {
  const c = theme().cat;
  return c[cat] || c.other;
}

/**
 * The font of each text kind, read from the theme when first asked for (graph-model.js
 * measures text with these; it exports this object as FONTS).
 * @type {Readonly<Record<string, string>>}
 */
export const FONTS = Object.freeze(Object.defineProperties({}, Object.fromEntries(TEXT_KINDS.map((k) => [k, { get: () => theme().font[k], enumerable: true }]))));

/**
 * The heat map's colour of drawn box `id` (its heat class among `marks`), or null.
 * @param {Map<string, Set<string>> | null | undefined} marks a renderer's: class -> drawn ids
 * @param {string} id
 */
export function heatColour(marks, id) {
  if (!marks) return null;
  let found = null;
  for (const cls of HEAT_CLASSES) if (marks.get(cls)?.has(id)) found = cls;
  return found ? theme().heat[found] : null;
}
