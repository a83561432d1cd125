// The sidebar panels. Each panel lives in its own module; this one gathers them for
// sidebar-panels.js. Model strings only ever enter the page as text nodes
// (dom.js) or as sanitised Markdown (markdown.js).

export { parseAttributeInput } from "./attribute-view.js";
export { refreshValidation, renderModelPanel } from "./model-panel.js";
export { renderNodePanel } from "./node-panel.js";
export { renderTensorPanel, renderValuePanel } from "./value-panel.js";

