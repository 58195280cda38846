// quizapp progressive enhancement; every page works without it.
// - Boxes that scroll sideways (wide math, tables) become focusable, labelled regions with a cue.
// - The answer preview: as the student types, how the answer is read (the server reads it, with
//   the grader's own parser: POST .../preview stores nothing and uses no attempt).
// - Pasting an answer into a grid box fills the grid as the text box would read it, or says why not.
// - After a submit, the verdict has the focus (autofocus) and is announced (live region).
"use strict";
(function () {
  var WAIT = 350; // ms after the last keystroke before asking for a preview

  function say(el, text, bad) {
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("bad", !!bad);
  }

  // --- boxes that scroll sideways ---------------------------------------------------------
  var SCROLLERS = ".math-display, .table-wrap, .prompt, .hints, .solution";
  var FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]";
  function labelOf(box) {
    if (box.querySelector("table")) return "Table (scroll sideways to see all of it)";
    if (box.classList.contains("math-display")) return "Formula (scroll sideways to see all of it)";
    return "Text (scroll sideways to see all of it)";
  }
  function markScrollers() {
    document.querySelectorAll(SCROLLERS).forEach(function (box) {
      var ours = box.dataset.scroller === "1";
      var wide = box.scrollWidth > box.clientWidth + 1;
      if (wide && !ours && !box.hasAttribute("tabindex") && !box.querySelector(FOCUSABLE)) {
        box.tabIndex = 0;
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", labelOf(box));
        box.classList.add("scrolls");
        box.dataset.scroller = "1";
      } else if (!wide && ours) {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
        box.classList.remove("scrolls");
        delete box.dataset.scroller;
      }
    });
  }
  var resizeTimer;
  function markLater() {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(markScrollers, 100);
  }

  // --- the answer preview -----------------------------------------------------------------
  var section = document.querySelector("[data-preview-url]");
  function ask(form, body) {
    var token = form.querySelector("input[name=csrf_token]");
    return fetch(section.dataset.previewUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": token ? token.value : "" },
      body: JSON.stringify(body),
    }).then(function (r) {
      return r.json().then(function (d) {
        if (r.ok) return d;
        if (r.status === 429) return null; // too many previews: show none until the next one
        return { status: "invalid", message: d.error || "This answer could not be checked." };
      });
    });
  }
  function show(box, d) {
    var msg = box.querySelector(".preview-message");
    var math = box.querySelector(".preview-math");
    box.classList.remove("preview-valid", "preview-invalid");
    if (!d) {
      msg.textContent = "";
      math.textContent = "";
      return;
    }
    box.classList.add("preview-" + d.status);
    msg.textContent =
      d.status === "valid"
        ? d.message + " Not graded yet: no attempt used."
        : "Cannot be read: " + d.message + " No attempt used.";
    math.innerHTML = d.read_as_html || ""; // MathML the server rendered and escaped
    markScrollers();
  }
  function gridValues(form) {
    var rows = [];
    var empty = false;
    form.querySelectorAll("table.grid tbody tr").forEach(function (tr) {
      var row = [];
      tr.querySelectorAll("input").forEach(function (box) {
        if (!box.readOnly && !box.value.trim()) empty = true;
        row.push(box.value);
      });
      rows.push(row);
    });
    return empty ? null : rows;
  }
  function setUpPreview(form, via) {
    var box = form.querySelector('[data-preview="' + via + '"]');
    if (!box || !section) return;
    var timer;
    var last = null;
    var seq = 0;
    var button = form.querySelector(".check-button");
    if (button) button.hidden = true; // the live preview replaces it
    function update() {
      var field = form.querySelector("[name=answer]");
      var answer = via === "cells" ? gridValues(form) : field && field.value.trim() ? field.value : null;
      var key = JSON.stringify(answer);
      if (key === last) return;
      last = key;
      var mine = ++seq;
      if (answer === null) return show(box, null);
      ask(form, via === "cells" ? { cells: answer } : { answer: answer })
        .then(function (d) { if (mine === seq) show(box, d); })
        .catch(function () { if (mine === seq) show(box, null); });
    }
    form.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(update, WAIT);
    });
    form.quizappPreview = update;
  }

  // --- pasting a whole answer into a grid box -----------------------------------------------
  function setUpPaste(form) {
    var status = form.querySelector(".paste-status");
    var table = form.querySelector("table.grid");
    var R = table.querySelectorAll("tbody tr").length;
    var C = R ? table.querySelector("tbody tr").querySelectorAll("input").length : 0;
    form.addEventListener("paste", function (event) {
      var target = event.target;
      if (!(target instanceof HTMLInputElement) || !/^cell-\d+-\d+$/.test(target.id)) return;
      var text = (event.clipboardData || window.clipboardData).getData("text");
      if (!/[\s,;[\]{}&\\]/.test(text.trim())) return; // one number: the browser pastes it
      event.preventDefault();
      var at = target.id.split("-");
      var r0 = +at[1];
      var c0 = +at[2];
      say(status, "Reading the pasted answer…");
      ask(form, { answer: text })
        .then(function (d) {
          var cells = d && d.cells;
          if (!cells || !cells.length) {
            var why = d ? d.message : "too many requests, try again in a moment.";
            return say(status, "The pasted answer cannot be read: " + why + " Nothing was filled.", true);
          }
          if (C === 1 && cells.length === 1) cells = cells[0].map(function (v) { return [v]; });
          else if (R === 1 && cells[0].length === 1) cells = [cells.map(function (row) { return row[0]; })];
          var rows = cells.length;
          var cols = cells[0].length;
          if (rows === R && cols === C) r0 = c0 = 0; // the whole answer: the whole grid
          if (r0 + rows > R || c0 + cols > C) {
            return say(status, "The pasted answer is " + rows + " × " + cols + ", but the grid is " + R +
              " × " + C + (r0 || c0 ? " (from row " + (r0 + 1) + ", column " + (c0 + 1) + ")" : "") +
              ": nothing was filled. Paste a " + R + " × " + C + " answer, or use the text box below.", true);
          }
          var filled = 0;
          cells.forEach(function (row, i) {
            row.forEach(function (value, j) {
              var box = form.querySelector("#cell-" + (r0 + i) + "-" + (c0 + j));
              if (box && !box.readOnly) {
                box.value = value;
                filled++;
              }
            });
          });
          say(status, "Filled " + filled + " box" + (filled === 1 ? "" : "es") + " from the pasted answer.");
          if (form.quizappPreview) form.quizappPreview();
        })
        .catch(function () {
          var area = document.getElementById("answer-text");
          if (area) area.value = text;
          say(status, "The pasted answer could not be checked just now; it is in the text box below.", true);
        });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    markScrollers();
    window.addEventListener("resize", markLater);
    document.addEventListener("toggle", markLater, true); // a hint or "as text" opened
    document.querySelectorAll("form.grid-form").forEach(function (form) {
      setUpPaste(form);
      setUpPreview(form, "cells");
    });
    document.querySelectorAll("form.text-form, form.single-form").forEach(function (form) {
      setUpPreview(form, "text");
    });
    var verdict = document.querySelector(".verdict[data-announce]");
    if (verdict) {
      if (document.activeElement !== verdict) verdict.focus();
      var text = [];
      verdict.querySelectorAll("h2, .score, .message, .cell-problems li, .mistakes li").forEach(function (el) {
        text.push(el.textContent.replace(/\s+/g, " ").trim());
      });
      var left = document.getElementById("attempts-left");
      if (left) text.push("Attempts left: " + left.textContent + ".");
      setTimeout(function () {
        var live = document.getElementById("announce");
        if (live) live.textContent = text.join(" ");
      }, 300);
    }
  });
})();
