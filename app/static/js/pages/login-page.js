// The sign-in page keeps the part of a link after "#" (the node, the revision), which a browser
// never sends the server: signed in, the link opens where it points (QA26: a teammate's shared
// link opened the model page without its node).
const next = document.querySelector('input[name="next"]');
if (next instanceof HTMLInputElement && window.location.hash && !next.value.includes("#")) {
  next.value += window.location.hash;
}

// the name given last time on this browser, given again (a person signs in under one name)
const NAME_KEY = "onnx-studio.author";
const nameField = document.querySelector('input[name="name"]');
const loginForm = nameField ? nameField.closest("form") : null;
if (nameField instanceof HTMLInputElement && loginForm) {
  try { if (!nameField.value) nameField.value = localStorage.getItem(NAME_KEY) || ""; } catch { /* storage off */ }
  loginForm.addEventListener("submit", () => {
    try { localStorage.setItem(NAME_KEY, nameField.value.trim()); } catch { /* storage off: asked again */ }
  });
}
