// The sign-in page keeps the part of a link after "#" (the node, the revision), which a browser
// never sends the server: signed in, the link opens where it points (QA26: a teammate's shared
// link opened the model page without its node).
const next = document.querySelector('input[name="next"]');
if (next instanceof HTMLInputElement && window.location.hash && !next.value.includes("#")) {
  next.value += window.location.hash;
}
