// Light or dark: the person's choice (the top bar's button, kept in this browser), else the
// system's. A classic script in every page's <head>, so the first paint has the chosen colours:
// it sets <html class="dark"> (app.css's dark palette) and data-scheme (which icon the button
// shows), and tells renderers/theme.js by a "studio:scheme" event when the palette changed, for
// what it drew on a canvas to be drawn again.
(() => {
  const KEY = "studio:scheme";
  const NEXT = { system: "light", light: "dark", dark: "system" };
  const WORDS = { system: "as the system", light: "light", dark: "dark" };
  const system = matchMedia("(prefers-color-scheme: dark)");
  const root = document.documentElement;

  function stored() {
    try {
      const value = localStorage.getItem(KEY);
      return value && value in NEXT ? value : "system";
    } catch {
      return "system"; // storage off: the system's, on every page
    }
  }

  let choice = stored();

  function label() {
    const button = document.getElementById("scheme-toggle");
    if (!button) return;
    const now = choice === "system" ? ` (${system.matches ? "dark" : "light"} now)` : "";
    const words = `Colours: ${WORDS[choice]}${now}. Click for ${WORDS[NEXT[choice]]}.`;
    button.setAttribute("aria-label", words);
    button.title = words;
  }

  function apply() {
    const dark = choice === "dark" || (choice === "system" && system.matches);
    root.dataset.scheme = choice;
    const changed = root.classList.contains("dark") !== dark;
    root.classList.toggle("dark", dark);
    label();
    if (changed) window.dispatchEvent(new CustomEvent("studio:scheme", { detail: { dark } }));
  }

  function choose(next) {
    choice = next;
    try {
      if (next === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, next);
    } catch { /* not kept: this page only */ }
    apply();
  }

  system.addEventListener("change", apply);
  // the choice made on another page of this server
  window.addEventListener("storage", (e) => {
    if (e.key === KEY || e.key === null) {
      choice = stored();
      apply();
    }
  });
  document.addEventListener("DOMContentLoaded", () => {
    const button = document.getElementById("scheme-toggle");
    if (button) button.addEventListener("click", () => choose(NEXT[choice]));
    label();
  });
  apply();
})();
