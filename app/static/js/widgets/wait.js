// Feedback on waits a person would notice: a status pill (the toolbar's #wait-status) saying
// what the page waits for ("Saving…", "Undoing…") once the wait passes WAIT_SHOWN_AFTER_MS — a
// quick answer shows nothing — gone when it ends.

export const WAIT_SHOWN_AFTER_MS = 300;

let current = 0;

/**
 * Run `work`, with `text` in `pill` while it runs if it takes longer than WAIT_SHOWN_AFTER_MS.
 * @template T
 * @param {HTMLElement | null} pill
 * @param {string} text
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function withWaitStatus(pill, text, work) {
  const token = ++current;
  const timer = pill ? setTimeout(() => {
    if (token !== current) return;
    pill.textContent = text;
    pill.hidden = false;
  }, WAIT_SHOWN_AFTER_MS) : 0;
  try {
    return await work();
  } finally {
    clearTimeout(timer);
    if (pill && token === current) {
      pill.hidden = true;
      pill.textContent = "";
    }
  }
}
