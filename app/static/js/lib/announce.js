// One polite status region for the whole page (base.html's #announcer): what a screen reader
// is told when something it can't see happens — the drawing's selection moved, a run finished
// (QA41 #1, #5). Text set anew each time, so the same words twice are said twice.

/** Have a screen reader say `text` (politely: after what it is saying). */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region || !text) return;
  region.textContent = "";
  // the next frame: a region emptied and filled in one task is not always heard as a change
  requestAnimationFrame(() => { region.textContent = text; });
}
