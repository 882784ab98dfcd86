// Sandgate scenario editor: checks the text as it is typed (the operator call the form names in
// data-check) and lists every problem with its line; "Try it" asks which rule answers a sample
// request. Builds the list with textContent only: nothing typed is parsed as HTML.
(function () {
  "use strict";
  var form = document.getElementById("editor-form");
  if (!form) return;
  var endpoint = form.getAttribute("data-check");
  var source = document.getElementById("editor-source");
  var list = document.getElementById("editor-problems");
  var state = document.getElementById("editor-state");
  var save = document.getElementById("editor-save");
  var timer;

  function post(body) {
    return fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(body),
    }).then(function (res) {
      return res.json();
    });
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function show(answer) {
    var problems = answer.problems || [];
    list.textContent = "";
    problems.forEach(function (p) {
      var li = document.createElement("li");
      li.setAttribute("data-line", String(p.line));
      if (p.line) {
        var line = document.createElement("strong");
        line.textContent = "line " + p.line;
        li.appendChild(line);
        li.appendChild(document.createTextNode(" "));
      }
      if (p.path) {
        var path = document.createElement("code");
        path.textContent = p.path;
        li.appendChild(path);
        li.appendChild(document.createTextNode(" "));
      }
      li.appendChild(document.createTextNode(p.message));
      list.appendChild(li);
    });
    source.setAttribute("aria-invalid", answer.valid ? "false" : "true");
    save.disabled = !answer.valid;
    state.textContent = answer.valid
      ? "Valid: scenario " + answer.name + ", " + plural(answer.rules, "rule") + " once resolved (its parents' included)."
      : plural(problems.length, "problem") + ": fix " + (problems.length === 1 ? "it" : "them") + " to save.";
  }

  function check() {
    post({ source: source.value }).then(show, function () {
      state.textContent = "Could not check the text (is Sandgate still running?).";
    });
  }

  source.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(check, 250);
  });
  check();

  var run = document.getElementById("try-run");
  var out = document.getElementById("try-answer");
  run.addEventListener("click", function () {
    var fields;
    try {
      fields = JSON.parse(document.getElementById("try-fields").value || "{}");
    } catch (err) {
      out.textContent = "The fields are not JSON: " + err.message;
      return;
    }
    if (!fields || typeof fields !== "object" || Array.isArray(fields)) {
      out.textContent = "The fields must be a JSON object.";
      return;
    }
    var operation = document.getElementById("try-operation").value;
    post({ source: source.value, sample: { operation: operation, fields: fields } }).then(function (answer) {
      show(answer);
      if (!answer.valid) {
        out.textContent = "Fix the scenario's problems first.";
        return;
      }
      var a = answer.answer;
      out.textContent = a.rules.length
        ? "Rule " +
          a.rules[0] +
          " answers" +
          (a.outcome ? ": " + a.outcome : " (no outcome of its own: the operation's default)") +
          (a.rules.length > 1 ? " (with " + a.rules.slice(1).join(", ") + ")" : "") +
          "."
        : "No rule matches: the operation's default answer.";
    });
  });
})();
