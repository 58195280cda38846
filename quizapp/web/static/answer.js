// quizapp: an open answer form (docs/answer-syntax.md): live preview, paste into a grid.
"use strict";
(function () {
  var q = window.quizapp, $ = q.$, $$ = q.$$, say = q.say, home = $("[data-preview-url]");
  var map = function (list, f) { return Array.prototype.map.call(list, f); };

  function post(form, body) {
    return fetch(home.dataset.previewUrl, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRFToken": $("[name=csrf_token]", form).value },
    }).then(function (r) {
      return r.json().then(function (d) {
        return r.ok ? d : r.status === 429 ? null : { status: "invalid", message: d.error || "It could not be checked." };
      });
    });
  }
  function show(box, d) {
    box.className = "preview" + (d ? " preview-" + d.status : "");
    $(".preview-message", box).textContent = !d ? "" : d.status === "valid" ?
      d.message + " Not graded yet: no attempt used." : "Cannot be read: " + d.message + " No attempt used.";
    $(".preview-math", box).innerHTML = d ? d.read_as_html : ""; // MathML the server rendered
    q.markScrollers();
  }
  function add(cls, before, html) {
    var el = document.createElement(html ? "div" : "p");
    el.className = cls;
    el.innerHTML = html || "";
    before.before(el);
    return el;
  }

  // One answer: `root` holds its grid and/or its text `field` (which wins); send(answer) posts a
  // text or rows of cells and resolves to how it is read.
  function setUp(form, root, field, box, status, send) {
    var trs = $$("table.grid tbody tr", root), R = trs.length, C = R && $$("input", trs[0]).length;
    var timer, last, seq = 0;
    function cells() { // null while a box is empty
      if (!R || [].some.call($$("table.grid input", root), function (b) { return !b.readOnly && !b.value.trim(); })) return null;
      return map(trs, function (tr) { return map($$("input", tr), function (b) { return b.value; }); });
    }
    function update() {
      var answer = field && field.value.trim() ? field.value : cells(), key = JSON.stringify(answer), mine = ++seq;
      if (!box || key === last) return;
      last = key;
      if (answer === null) return show(box, null);
      send(answer).then(function (d) { if (mine === seq) show(box, d); }, function () { if (mine === seq) show(box, null); });
    }
    if (box) root.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(update, 350); });
    if (R && status) root.addEventListener("paste", function (event) {
      var at = /cell-(\d+)-(\d+)$/.exec(event.target.name || ""), r0 = at && +at[1], c0 = at && +at[2];
      var text = (event.clipboardData || window.clipboardData).getData("text");
      // One number, or a decimal comma (the box's reader explains it): the box takes it.
      if (!at || !/[\s,;[\]{}&\\]/.test(text.trim()) || /^[-+]?\d+,\d+$/.test(text.trim())) return;
      event.preventDefault();
      say(status, "Reading the pasted answer…");
      send(text).then(function (d) {
        var cells = d && d.cells, filled = 0;
        if (!cells || !cells.length || d.status === "invalid") {
          return say(status, "The pasted answer cannot be read: " + (d ? d.message : "try again in a moment.") +
            " Nothing was filled.", true);
        }
        if (C === 1 && cells.length === 1) cells = cells[0].map(function (v) { return [v]; });
        else if (R === 1 && cells[0].length === 1) cells = [cells.map(function (row) { return row[0]; })];
        var rows = cells.length, cols = cells[0].length;
        if (rows === R && cols === C) r0 = c0 = 0;
        if (r0 + rows > R || c0 + cols > C) {
          return say(status, "The pasted answer is " + rows + " × " + cols + ", but the grid is " + R + " × " + C +
            (r0 || c0 ? " (from row " + (r0 + 1) + ", column " + (c0 + 1) + ")" : "") +
            ": nothing was filled. Paste a " + R + " × " + C + " answer, or use the text box.", true);
        }
        cells.forEach(function (row, i) {
          row.forEach(function (value, j) {
            var cell = $("[name$=cell-" + (r0 + i) + "-" + (c0 + j) + "]", root);
            if (cell && !cell.readOnly) { cell.value = value; filled++; }
          });
        });
        say(status, "Filled " + filled + " box" + (filled === 1 ? "" : "es") + " from the pasted answer.");
        update();
      }, function () {
        var area = field || $("#answer-text");
        if (area) area.value = text;
        say(status, "The pasted answer could not be checked just now; it is in the text box.", true);
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (!home) return;
    $$("form.grid-form,form.text-form,form.single-form").forEach(function (form) {
      var box = $("[data-preview]", form), check = $(".check-button", form);
      if (box && check) check.hidden = true;
      setUp(form, form, $("[name=answer]", form), box, $(".paste-status", form), function (a) {
        return post(form, a.map ? { cells: a } : { answer: a });
      });
    });
    $$("section.part[data-part]").forEach(function (part) {
      var form = part.closest("form"), name = part.dataset.part, at = $(".part-check", part);
      var field = $("textarea,input[type=text]", part), status = $("table.grid", part) && add("paste-status", at);
      if (status) status.setAttribute("role", "status");
      setUp(form, part, field, field && add("preview", at, '<p class="preview-message" aria-live="polite"></p><div class="preview-math"></div>'),
        status, function (a) {
          var body = { parts: {} };
          body.parts[name] = a;
          return post(form, body).then(function (d) { return d && d.parts ? d.parts[name] : d; });
        });
    });
  });
})();
