// Sandgate QA dashboard: keeps the request log live (newest first) by asking /__sandbox/requests
// every second. Builds rows with textContent only: nothing from a request is parsed as HTML.
(function () {
  "use strict";
  var section = document.getElementById("request-log");
  if (!section) return;
  var body = section.querySelector("tbody");
  var state = document.getElementById("live-state");
  var query = section.getAttribute("data-query") || "";
  // the operator call the page names (the table's listRequests), not a path written here
  var endpoint = section.getAttribute("data-endpoint");
  var lastSeen = "";

  function cell(row, text, className) {
    var td = document.createElement("td");
    if (className) {
      var code = document.createElement("code");
      code.textContent = text;
      td.appendChild(code);
    } else td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function signature(td, s) {
    if (!s) {
      td.textContent = "—";
      return;
    }
    var details = document.createElement("details");
    var summary = document.createElement("summary");
    summary.textContent = s.matched ? "matched" : "mismatched";
    summary.className = s.matched ? "sig-ok" : "sig-bad";
    details.appendChild(summary);
    [
      ["expected ", s.expected],
      ["received ", s.received],
    ].forEach(function (pair) {
      var div = document.createElement("div");
      div.textContent = pair[0];
      var code = document.createElement("code");
      code.textContent = pair[1];
      div.appendChild(code);
      details.appendChild(div);
    });
    var label = document.createElement("div");
    label.textContent = "signing string (key masked)";
    details.appendChild(label);
    var pre = document.createElement("pre");
    pre.textContent = s.signingString;
    details.appendChild(pre);
    td.appendChild(details);
  }

  function render(entries) {
    var open = {};
    body.querySelectorAll("tr[data-id] details[open]").forEach(function (d) {
      open[d.closest("tr").getAttribute("data-id")] = true;
    });
    var rows = document.createDocumentFragment();
    entries
      .slice()
      .reverse()
      .forEach(function (r) {
        var tr = document.createElement("tr");
        tr.setAttribute("data-id", r.id);
        cell(tr, r.at.replace("T", " ").slice(0, 19));
        cell(tr, r.operation);
        cell(tr, r.merchant_id, true);
        cell(tr, r.order_no);
        cell(tr, String(r.http_status));
        var result = cell(tr, r.result);
        if (r.note) {
          var note = document.createElement("div");
          note.className = "hint";
          note.textContent = r.note;
          result.appendChild(note);
        }
        cell(tr, ruleShown(r.rule), true);
        signature(cell(tr, ""), r.signature);
        if (open[r.id]) tr.querySelector("details").open = true;
        rows.appendChild(tr);
      });
    body.replaceChildren(rows);
  }

  // a rule as a tester reads it: the browser's copy of ruleShown (src/base/words.ts; this script has no build step)
  function ruleShown(rule) {
    return rule
      .split(", ")
      .map(function (one) {
        var end = one.lastIndexOf("/(no rule)");
        return end >= 0 && end === one.length - 10 ? "default answer (scenario " + one.slice(0, end) + ")" : one;
      })
      .join(", ");
  }

  function poll() {
    var url = endpoint + "?limit=100" + (query ? "&" + query : "");
    fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then(function (res) {
        if (!res.ok) throw new Error("HTTP " + res.status);
        return res.json();
      })
      .then(function (data) {
        var entries = data.requests || [];
        var newest = entries.length ? entries[entries.length - 1].id + ":" + entries.length : "";
        if (newest !== lastSeen) {
          lastSeen = newest;
          if (entries.length) render(entries);
        }
        state.textContent = "live";
      })
      .catch(function (err) {
        state.textContent = "paused (" + err.message + "), retrying";
      })
      .finally(function () {
        setTimeout(poll, 1000);
      });
  }
  poll();
})();
