// Where an expanded group's tab (its title and collapse toggle) sits along its top edge. A frame
// wider than the window — a flat graph's sections, a BERT layer — may start left of it, which
// hid its title ("…t 1 · 39 ops" at the window's edge, or nothing): while the frame reaches past
// the window's left edge, its tab keeps to that edge, as a sticky header does, and never goes
// past the frame's right end. One rule for the SVG and canvas drawings and their hit tests.

const MARGIN = 8; // CSS px between the window's left edge and a tab kept to it

/**
 * The tab's left x in drawing units.
 * @param {{x: number, w: number}} frame @param {number} tabWidth in drawing units
 * @param {number} windowLeft the window's left edge in drawing units @param {number} k zoom
 */
export function tabX(frame, tabWidth, windowLeft, k) {
  const kept = windowLeft + MARGIN / k;
  return Math.max(frame.x, Math.min(kept, frame.x + frame.w - tabWidth - 8));
}
