// quizapp: the answer form of a single-answer exercise (loaded after app.js, whose helpers it
// takes from window.quizapp; only a page with an open answer form loads it; no build step):
// the answer preview (POST .../preview: the server reads the answer with the grader's parser,
// stores nothing), and a whole answer pasted into a grid box fills the grid as the text box would
// read it, or says why not.
"use strict";
(function () {
  var q = window.quizapp, $ = q.$, $$ = q.$$, say = q.say, markScrollers = q.markScrollers;

  var section = $("[data-preview-url]");
  function ask(form, body) {
    return fetch(section.dataset.previewUrl, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRFToken": $("[name=csrf_token]", form).value },
    }).then(function (r) {
      return r.json().then(function (d) {
        if (r.ok) return d;
        return r.status === 429 ? null : { status: "invalid", message: d.error || "It could not be checked." };
      });
    });
  }
  function show(box, d) {
    box.className = "preview" + (d ? " preview-" + d.status : "");
    $(".preview-message", box).textContent = !d ? "" : d.status === "valid" ?
      d.message + " Not graded yet: no attempt used." : "Cannot be read: " + d.message + " No attempt used.";
    $(".preview-math", box).innerHTML = d ? d.read_as_html : ""; // MathML the server rendered
    markScrollers();
  }
  function gridValues(form) {
    var empty = false;
    var rows = Array.prototype.map.call($$("table.grid tbody tr", form), function (tr) {
      return Array.prototype.map.call($$("input", tr), function (box) {
        if (!box.readOnly && !box.value.trim()) empty = true;
        return box.value;
      });
    });
    return empty ? null : rows;
  }
  function setUpPreview(form, via) {
    var box = $('[data-preview="' + via + '"]', form), timer, last, seq = 0;
    if (!box || !section) return;
    $(".check-button", form).hidden = true; // the live preview replaces the button
    function update() {
      var field = $("[name=answer]", form);
      var answer = via === "cells" ? gridValues(form) : field.value.trim() ? field.value : null;
      var key = JSON.stringify(answer);
      if (key === last) return;
      last = key;
      var mine = ++seq;
      if (answer === null) return show(box, null);
      ask(form, via === "cells" ? { cells: answer } : { answer: answer })
        .then(function (d) { if (mine === seq) show(box, d); }, function () { if (mine === seq) show(box, null); });
    }
    form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(update, 350); });
    form.quizappPreview = update;
  }

  function setUpPaste(form) {
    var status = $(".paste-status", form), trs = $$("table.grid tbody tr", form);
    var R = trs.length, C = R ? $$("input", trs[0]).length : 0;
    form.addEventListener("paste", function (event) {
      var target = event.target, text = (event.clipboardData || window.clipboardData).getData("text");
      if (!/^cell-\d+-\d+$/.test(target.name) || !/[\s,;[\]{}&\\]/.test(text.trim())) return; // one number
      event.preventDefault();
      var at = target.name.split("-"), r0 = +at[1], c0 = +at[2];
      say(status, "Reading the pasted answer…");
      if (!section) return;
      ask(form, { answer: text }).then(function (d) {
        var cells = d && d.cells, filled = 0;
        if (!cells || !cells.length) {
          return say(status, "The pasted answer cannot be read: " + (d ? d.message : "try again in a moment.") +
            " Nothing was filled.", true);
        }
        if (C === 1 && cells.length === 1) cells = cells[0].map(function (v) { return [v]; });
        else if (R === 1 && cells[0].length === 1) cells = [cells.map(function (row) { return row[0]; })];
        var rows = cells.length, cols = cells[0].length;
        if (rows === R && cols === C) r0 = c0 = 0; // the whole answer fills the whole grid
        if (r0 + rows > R || c0 + cols > C) {
          return say(status, "The pasted answer is " + rows + " × " + cols + ", but the grid is " + R + " × " + C +
            (r0 || c0 ? " (from row " + (r0 + 1) + ", column " + (c0 + 1) + ")" : "") +
            ": nothing was filled. Paste a " + R + " × " + C + " answer, or use the text box below.", true);
        }
        cells.forEach(function (row, i) {
          row.forEach(function (value, j) {
            var box = $("[name=cell-" + (r0 + i) + "-" + (c0 + j) + "]", form);
            if (box && !box.readOnly) { box.value = value; filled++; }
          });
        });
        say(status, "Filled " + filled + " box" + (filled === 1 ? "" : "es") + " from the pasted answer.");
        if (form.quizappPreview) form.quizappPreview();
      }, function () {
        var area = $("#answer-text");
        if (area) area.value = text;
        say(status, "The pasted answer could not be checked just now; it is in the text box below.", true);
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    $$("form.grid-form").forEach(function (form) { setUpPaste(form); setUpPreview(form, "cells"); });
    $$("form.text-form,form.single-form").forEach(function (form) { setUpPreview(form, "text"); });
  });
})();
