// Small DOM helpers. Every piece of text goes in as a text node (never innerHTML), so
// strings from a model file cannot inject markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function apply(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.setAttribute("class", value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key in node && typeof value !== "string" && node.namespaceURI !== SVG_NS) {
      node[key] = value;
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** el("div", {class: "x"}, "text", otherNode) */
export function el(tag, attrs, ...children) {
  return append(apply(document.createElement(tag), attrs), children);
}

/** SVG element, same calling convention as el(). */
export function svg(tag, attrs, ...children) {
  return append(apply(document.createElementNS(SVG_NS, tag), attrs), children);
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

/**
 * Resolves once the browser has painted what was just drawn: a task queued from an animation
 * frame runs right after that frame's style, layout and paint (a second frame would add
 * ~16 ms for nothing). Soon anyway in a hidden tab, where animation frames do not run.
 * @returns {Promise<void>}
 */
export function painted() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 200);
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { clearTimeout(timer); resolve(); };
      channel.port2.postMessage(null);
    });
  });
}

/**
 * Resolves in a task queued now, behind those already queued: after painted(), what everyone
 * else waiting for that paint does runs first (messages run in the order they were posted).
 * @returns {Promise<void>}
 */
export function nextTask() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
}

/** Is the person busy in `root`: typing in a field of it, or with a form of it open? A redraw
 * then would throw away what they typed, so background news waits for their next step. */
export function busyIn(root) {
  const active = document.activeElement;
  if (active && root.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) return true;
  return [...root.querySelectorAll(".ed-disclosure-body:not([hidden])")].some((body) => body.querySelector("input, select, textarea"));
}

/** `text` with a line-break opportunity (<wbr>) at each place `at` (a split pattern) finds. */
export function withBreaks(text, at) {
  return text.split(at).flatMap((part, i) => (i ? [el("wbr"), part] : [part]));
}

/** A name with line-break opportunities after its separators ("/", ".", "_"). */
export function breakable(name) {
  return withBreaks(name, /(?<=[^\s/._][/._])/); // not after a leading "/" (a line of "/" alone)
}
