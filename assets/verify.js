// Sandgate QA dashboard, Verify tab: reads the chosen recording (a HAR file), posts it to
// POST /__sandbox/verify and shows the report: a summary line, then the differences grouped by
// operation, the gateway's recorded value beside Sandgate's. Everything is built with textContent:
// a recording is someone else's data, nothing of it is ever parsed as HTML.
(function () {
  "use strict";
  var form = document.getElementById("verify-form");
  if (!form) return;
  var fileInput = document.getElementById("verify-file");
  var ignoreInput = document.getElementById("verify-ignore");
  var suggestInput = document.getElementById("verify-suggest");
  var button = document.getElementById("verify-submit");
  var message = document.getElementById("verify-message");
  var result = document.getElementById("verify-result");
  var scenario = document.getElementById("verify-scenario");
  var endpoint = form.getAttribute("data-endpoint");
  var limit = Number(form.getAttribute("data-limit")) || 0;

  var dom = window.SandgateReportDom;
  var el = dom.el;
  var plural = dom.plural;
  /** A status line above the result: progress, or what went wrong (the API's message). */
  function say(text, bad) {
    dom.say(message, "verify-flash", text, bad);
  }

  function table(headers, className) {
    var t = el("table", null, className);
    var tr = el("tr");
    headers.forEach(function (h) {
      tr.appendChild(el("th", h));
    });
    var thead = el("thead");
    thead.appendChild(tr);
    t.appendChild(thead);
    var tbody = el("tbody");
    t.appendChild(tbody);
    return { table: t, body: tbody };
  }

  function summary(report, fileName) {
    var replayed = report.exchanges.filter(function (x) {
      return x.kind !== "notification";
    }).length;
    var withDifferences = report.exchanges.filter(function (x) {
      return x.differences > 0;
    }).length;
    var n = report.differences.length;
    var section = el("section", null, "card");
    section.id = "verify-summary";
    var line = el("p");
    line.appendChild(el("span", n ? plural(n, "difference") : "no differences", n ? "status bad" : "status ok"));
    var notifications = report.notifications.compared
      ? report.notifications.recorded + " recorded, " + report.notifications.sent + " sent by Sandgate"
      : "none recorded (record with --notify-to to compare them)";
    line.appendChild(
      document.createTextNode(
        " " +
          fileName +
          ": replayed " +
          plural(replayed, "exchange") +
          " against " +
          report.target +
          " (scenario " +
          scenario.textContent +
          ")" +
          (n ? "; " + plural(withDifferences, "exchange") + " differ" + (withDifferences === 1 ? "s" : "") : "; every answer agrees with the recording") +
          ". Notifications: " +
          notifications +
          ".",
      ),
    );
    section.appendChild(line);
    if (report.exchanges.length) {
      var details = el("details");
      details.appendChild(el("summary", "Exchanges (" + report.exchanges.length + ")"));
      var t = table(["#", "Operation", "Method", "Path", "Differences"], "verify-exchanges");
      report.exchanges.forEach(function (x) {
        var tr = el("tr");
        tr.appendChild(el("td", "#" + x.exchange));
        tr.appendChild(el("td", x.operation));
        tr.appendChild(el("td", x.method));
        var path = el("td");
        path.appendChild(el("code", x.path));
        tr.appendChild(path);
        tr.appendChild(el("td", x.differences ? String(x.differences) : "—"));
        t.body.appendChild(tr);
      });
      details.appendChild(t.table);
      section.appendChild(details);
    }
    return section;
  }

  /** One card per operation, in the order the recording first shows each. */
  function groups(differences) {
    var order = [];
    // no prototype: an operation is named from the recording (a notification's event)
    var byOperation = Object.create(null);
    differences.forEach(function (d) {
      if (!byOperation[d.operation]) {
        byOperation[d.operation] = [];
        order.push(d.operation);
      }
      byOperation[d.operation].push(d);
    });
    return order.map(function (operation) {
      var list = byOperation[operation];
      var section = el("section", null, "card verify-operation");
      section.setAttribute("data-operation", operation);
      var h2 = el("h2", operation + " ");
      h2.appendChild(el("span", plural(list.length, "difference"), "hint"));
      section.appendChild(h2);
      var t = table(["Exchange", "Path", "Kind", "Gateway (recorded)", "Sandgate"], "verify-differences");
      list.forEach(function (d) {
        var tr = el("tr");
        tr.setAttribute("data-path", d.path);
        tr.appendChild(el("td", "#" + d.exchange));
        var path = el("td");
        path.appendChild(el("code", d.path));
        if (d.note) path.appendChild(el("div", d.note, "hint"));
        tr.appendChild(path);
        var kind = el("td");
        var link = el("a", d.kind);
        // the legend below says what each kind means; a kind is one of a fixed list, the fragment stays on this page
        link.setAttribute("href", "#kind-" + encodeURIComponent(d.kind));
        kind.appendChild(link);
        tr.appendChild(kind);
        var expected = el("td", null, "verify-expected");
        expected.appendChild(el("pre", d.expected));
        tr.appendChild(expected);
        var actual = el("td", null, "verify-actual");
        actual.appendChild(el("pre", d.actual));
        tr.appendChild(actual);
        t.body.appendChild(tr);
      });
      section.appendChild(t.table);
      return section;
    });
  }

  /** --suggest's output: the scenario file to save, and what data cannot close. */
  function suggestions(s) {
    var section = el("section", null, "card");
    section.id = "verify-suggestions";
    section.appendChild(el("h2", "Suggested scenario rules"));
    if (s.scenario.rules.length) {
      section.appendChild(
        el(
          "p",
          plural(s.scenario.rules.length, "rule") +
            " closing " +
            plural(s.closes.length, "difference") +
            ". Save this as " +
            s.scenario.name +
            ".json in a scenario folder (next to the scenarios it extends) and verify again with that folder and scenario.",
          "hint",
        ),
      );
      section.appendChild(el("pre", JSON.stringify(s.scenario, null, 2)));
    } else section.appendChild(el("p", "No difference can be closed with a scenario rule.", "hint"));
    if (s.defects.length) {
      section.appendChild(el("h2", plural(s.defects.length, "difference") + " data cannot close"));
      var ul = el("ul");
      s.defects.forEach(function (line) {
        ul.appendChild(el("li", line));
      });
      section.appendChild(ul);
    }
    return section;
  }

  function render(report, fileName) {
    var parts = [summary(report, fileName)].concat(groups(report.differences));
    if (report.suggestions) parts.push(suggestions(report.suggestions));
    result.replaceChildren.apply(result, parts);
  }

  function query() {
    var parts = [];
    ignoreInput.value.split(",").forEach(function (p) {
      if (p.trim()) parts.push("ignore=" + encodeURIComponent(p.trim()));
    });
    if (suggestInput.value) parts.push("suggest=1");
    return parts.length ? "?" + parts.join("&") : "";
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = fileInput.files && fileInput.files[0];
    if (!file) return say("Pick a HAR file first.", true);
    if (limit && file.size > limit)
      return say(
        file.name + " is larger than " + Math.round(limit / 1048576) + " MB: record fewer exchanges, or run sandgate verify on the command line.",
        true,
      );
    button.disabled = true;
    result.replaceChildren();
    say("Replaying " + file.name + " against a fresh Sandgate…");
    file
      .text()
      .then(function (text) {
        return fetch(endpoint + query(), {
          method: "POST",
          credentials: "same-origin",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: text,
        });
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
        render(report, file.name);
      })
      .catch(function (err) {
        say("Could not verify " + file.name + ": " + err.message, true);
      })
      .finally(function () {
        button.disabled = false;
      });
  });
})();
