// A page whose session ended (an API call answered 401, api.js) offers to sign in again: the top
// bar's Sign out becomes a Sign in link to the login page in a new tab, coming back to this
// page's address, so that what is typed here is kept and works once signed in.
document.addEventListener("studio:signed-out", () => {
  const form = /** @type {HTMLFormElement | null} */ (document.querySelector("form.sign-out"));
  if (!form || form.dataset.signedOut) return;
  form.dataset.signedOut = "1";
  const back = `${window.location.pathname}${window.location.search}${window.location.hash}`;
  const link = document.createElement("a");
  link.className = "btn btn-small btn-primary sign-in-again";
  link.href = `${document.body.dataset.root || ""}/login?next=${encodeURIComponent(back)}`;
  link.target = "_blank";
  link.rel = "noopener";
  link.textContent = "Sign in";
  link.title = "Your session ended: sign in again (in a new tab; this page keeps what you typed)";
  form.replaceChildren(link);
});
