// Sandgate QA dashboard: what the tabs that show a JSON report (Verify, Receiver check) build their
// page with, loaded before the tab's own script. Only textContent: a report holds others' data.
window.SandgateReportDom = (function () {
  "use strict";

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  /** A status line in `holder` (its paragraph's id: `id`): progress, or what went wrong (the API's message). */
  function say(holder, id, text, bad) {
    holder.replaceChildren();
    if (!text) return;
    var p = el("p", text, bad ? "flash bad" : "flash");
    p.id = id;
    holder.appendChild(p);
  }

  return { el: el, plural: plural, say: say };
})();
