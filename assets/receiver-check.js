// Sandgate QA dashboard, Receiver check tab: posts the form to POST /__sandbox/receiver-checks and
// shows the report: a summary line (or why the run stopped, said once), then one row per probe:
// what was sent, the receiver's answer, the verdict and why. Everything is built with textContent:
// the URL and the receiver's answers are someone else's data, nothing of them is parsed as HTML.
(function () {
  "use strict";
  var form = document.getElementById("check-form");
  if (!form) return;
  var urlInput = document.getElementById("check-url");
  var merchantInput = document.getElementById("check-merchant");
  var transactionInput = document.getElementById("check-transaction");
  var keyInput = document.getElementById("check-key");
  var button = document.getElementById("check-submit");
  var message = document.getElementById("check-message");
  var result = document.getElementById("check-result");
  var endpoint = form.getAttribute("data-endpoint");
  var notificationsPage = form.getAttribute("data-notifications");
  var BADGE = { pass: "status ok", warning: "status wait", fail: "status bad" };

  var dom = window.SandgateReportDom;
  var el = dom.el;
  var plural = dom.plural;
  /** A status line above the result: progress, or what went wrong (the API's message). */
  function say(text, bad) {
    dom.say(message, "check-flash", text, bad);
  }

  /** "401 in 3 ms", or what happened instead of an answer (as the terminal report says it) */
  function answerOf(send) {
    return send.http_status === null ? String(send.error).replace(/^could not deliver: /, "") : send.http_status + " in " + send.duration_ms + " ms";
  }

  function summary(report) {
    var s = report.summary;
    var section = el("section", null, "card");
    section.id = "check-summary";
    var line = el("p");
    line.id = "check-counts";
    line.appendChild(el("span", report.passed ? "passes" : "does not pass", report.passed ? "status ok" : "status bad"));
    var counts = [s.pass + " pass", plural(s.warning, "warning"), plural(s.fail, "failure")];
    if (s.not_run) counts.push(s.not_run + " not run");
    line.appendChild(document.createTextNode(" " + plural(report.probes.length + s.not_run, "probe") + ": " + counts.join(", ")));
    section.appendChild(line);
    if (report.stopped) {
      var stopped = el("p", report.stopped + (report.not_run.length ? ". Not run: " + report.not_run.join(", ") + "." : ""), "flash bad");
      stopped.id = "check-stopped";
      section.appendChild(stopped);
    }
    var about = el("p", null, "hint");
    about.id = "check-about";
    about.appendChild(document.createTextNode("Check "));
    about.appendChild(el("code", report.check));
    about.appendChild(document.createTextNode(" of "));
    about.appendChild(el("code", report.url));
    about.appendChild(
      document.createTextNode(
        " for merchant " +
          report.merchant_id +
          ", about payment " +
          report.transaction_id +
          (report.payment === "created" ? " (made for the check)" : " (given)") +
          ", in " +
          (report.duration_ms / 1000).toFixed(1) +
          " s. ",
      ),
    );
    var link = el("a", "Its notifications, with every attempt");
    link.id = "check-notifications";
    link.setAttribute("href", notificationsPage + "?check=" + encodeURIComponent(report.check));
    about.appendChild(link);
    section.appendChild(about);
    return section;
  }

  function probes(report) {
    var section = el("section", null, "card");
    section.id = "check-report";
    var t = el("table");
    t.id = "check-probes";
    var head = el("tr");
    ["Probe", "What was sent", "Answer", "Verdict", "Why"].forEach(function (h) {
      head.appendChild(el("th", h));
    });
    var thead = el("thead");
    thead.appendChild(head);
    t.appendChild(thead);
    var body = el("tbody");
    report.probes.forEach(function (p) {
      var tr = el("tr");
      tr.setAttribute("data-probe", p.probe);
      tr.setAttribute("data-verdict", p.verdict);
      // the id in bold, not code: table cells break code anywhere, and tampered_amount would split
      var probe = el("td");
      probe.appendChild(el("strong", p.probe));
      tr.appendChild(probe);
      var sent = el("td", p.sent);
      sent.appendChild(el("div", "expects " + p.expects, "hint"));
      tr.appendChild(sent);
      var answer = el("td", null, "check-answer");
      p.sends.forEach(function (send) {
        var line = el("div", (p.sends.length > 1 ? send.event + ": " : "") + answerOf(send));
        if (send.response_body) line.appendChild(el("div", send.response_body.slice(0, 80), "hint mono"));
        answer.appendChild(line);
      });
      if (!p.sends.length) answer.appendChild(el("span", "—", "hint"));
      tr.appendChild(answer);
      var verdict = el("td");
      verdict.appendChild(el("span", p.verdict, (BADGE[p.verdict] || "status") + " check-verdict"));
      tr.appendChild(verdict);
      var why = el("td", p.reason, "check-why");
      if (p.verdict !== "pass") {
        var details = el("details");
        details.appendChild(el("summary", "the practice"));
        details.appendChild(el("div", p.why, "hint"));
        why.appendChild(details);
      }
      tr.appendChild(why);
      body.appendChild(tr);
    });
    t.appendChild(body);
    section.appendChild(t);
    return section;
  }

  function render(report) {
    var parts = [summary(report)];
    if (report.probes.length) parts.push(probes(report));
    result.replaceChildren.apply(result, parts);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var input = { url: urlInput.value.trim(), merchant_id: merchantInput.value.trim() };
    if (transactionInput.value.trim()) input.transaction_id = transactionInput.value.trim();
    // a key is taken as typed: spaces may be part of it
    if (keyInput.value) input.key = keyInput.value;
    button.disabled = true;
    result.replaceChildren();
    say("Checking " + input.url + ": one probe at a time…");
    fetch(endpoint, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(input),
    })
      .then(function (res) {
        return res
          .json()
          .catch(function () {
            return {};
          })
          .then(function (body) {
            if (!res.ok) throw new Error(body.message || "HTTP " + res.status);
            return body;
          });
      })
      .then(function (report) {
        say("");
        render(report);
      })
      .catch(function (err) {
        say("Could not check " + input.url + ": " + err.message, true);
      })
      .finally(function () {
        button.disabled = false;
      });
  });
})();
