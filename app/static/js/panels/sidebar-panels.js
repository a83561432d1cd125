// Everything the sidebar and the toolbar's views draw, in one chunk the page loads once the
// first drawing is painted (model-page.js): ~100 KB of panels and edit forms that a first view
// does not need to wait for.
export { refreshValidation, renderModelPanel, renderNodePanel, renderTensorPanel, renderValuePanel } from "./panels.js";
export { renderGroupPanel } from "./group-panel.js";
export { renderHistoryPanel } from "./history-panel.js";
export { renderComparePanel } from "./compare-panel.js";
export { renderRunPanel } from "./run-panel.js";
export { renderDataPanel, renderDataView } from "./data-view.js";
export { openTextView } from "./text-view.js";
