// Markdown, rendered safely: `marked` turns it into HTML, DOMPurify sanitises that HTML into a
// DocumentFragment (no innerHTML on our side), and only then does it enter the page.
//
//  - Model strings (doc_strings of models, graphs, nodes, functions, values): raw HTML in them is
//    shown as text, images become links, links open in a new tab and only http(s)/mailto survive.
//  - Operator docs from onnx.defs ("trusted"): their few HTML tags (<br>, <i>) are kept — still
//    sanitised — and their relative links point at the ONNX docs on GitHub.
// Both libraries come from npm (package.json) and are served under /vendor by app/web; they are
// loaded on first use. Until then, or if they fail to load, the text is shown as plain text.

const ONNX_DOCS = "https://github.com/onnx/onnx/blob/main/docs/";
const FORBID_TAGS = ["img", "style", "form", "input", "button", "textarea", "select", "option", "iframe",
  "object", "embed", "svg", "math", "video", "audio", "source", "picture", "link", "meta", "base"];
const FORBID_ATTR = ["style", "id", "name", "srcset", "formaction"];
const SAFE_URL = /^(?:https?:|mailto:)/i;

let loading = null;

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function absolute(href, base) {
  if (!href || SAFE_URL.test(href) || href.startsWith("#")) return href;
  if (!base || /^[a-z][a-z0-9+.-]*:/i.test(href)) return ""; // relative without a base, or an odd scheme
  try { return new URL(href, base).href; } catch { return ""; }
}

function makeParser(Marked, { allowHtml, base }) {
  return new Marked({
    gfm: true,
    async: false,
    walkTokens(token) {
      if (token.type === "link" || token.type === "image") token.href = absolute(token.href, base);
    },
    renderer: {
      html(token) {
        if (allowHtml) return token.text;
        return token.block ? `<p class="md-raw">${escapeHtml(token.text.trim())}</p>` : escapeHtml(token.text);
      },
      link(token) {
        // an unsafe or unresolvable address leaves the text without a link
        return token.href ? false : this.parser.parseInline(token.tokens);
      },
      image(token) {
        const label = `image: ${token.text || token.href || ""}`;
        if (!token.href) return escapeHtml(`[${label}]`);
        return `<a href="${escapeHtml(token.href)}">${escapeHtml(label)}</a>`;
      },
    },
  });
}

function load() {
  if (!loading) {
    const { marked: markedUrl, purify: purifyUrl } = document.body.dataset;
    loading = Promise.all([import(markedUrl), import(purifyUrl)]).then(([markedLib, purifyLib]) => {
      const purify = purifyLib.default;
      if (!purify || !purify.isSupported) throw new Error("DOMPurify is not supported in this browser");
      return {
        purify,
        model: makeParser(markedLib.Marked, { allowHtml: false, base: "" }),
        trusted: makeParser(markedLib.Marked, { allowHtml: true, base: ONNX_DOCS }),
      };
    });
    loading.catch(() => {}); // callers fall back to plain text
  }
  return loading;
}

function sanitize(purify, html) {
  const fragment = purify.sanitize(html, {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS,
    FORBID_ATTR,
    ALLOWED_URI_REGEXP: SAFE_URL,
  });
  for (const a of fragment.querySelectorAll("a")) {
    if (a.hasAttribute("href")) {
      a.setAttribute("target", "_blank");
      a.setAttribute("rel", "noopener noreferrer nofollow");
    }
  }
  return fragment;
}

function render(node, text, { trusted, inline }) {
  node.textContent = text; // plain text until the libraries are there
  node.dataset.md = "pending";
  load().then((libs) => {
    const parser = trusted ? libs.trusted : libs.model;
    const html = inline ? parser.parseInline(text) : parser.parse(text);
    node.replaceChildren(sanitize(libs.purify, html));
    // a code block scrolls sideways in a narrow panel: reachable from the keyboard in every
    // browser, not Chromium's alone (QA41 #9)
    for (const pre of node.querySelectorAll("pre")) {
      pre.setAttribute("tabindex", "0");
      pre.setAttribute("aria-label", "code");
    }
    node.dataset.md = "ready";
  }).catch(() => {
    node.dataset.md = "plain";
  });
  return node;
}

/** A block of Markdown (a doc_string, an operator's documentation). */
export function markdownBlock(text, { trusted = false, cls = "" } = {}) {
  const node = document.createElement("div");
  node.className = `md ${cls}`.trim();
  return render(node, String(text ?? "").trim(), { trusted, inline: false });
}

/** One line of Markdown (a parameter or attribute description). */
export function markdownInline(text, { trusted = false, cls = "" } = {}) {
  const node = document.createElement("span");
  node.className = `md-inline ${cls}`.trim();
  return render(node, String(text ?? "").trim(), { trusted, inline: true });
}
