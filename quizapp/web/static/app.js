// quizapp progressive enhancement (the pages work without it):
// pasting a whole matrix (several numbers) into one grid box spreads it over the grid.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("form.grid-form").forEach(function (form) {
    form.addEventListener("paste", function (event) {
      var target = event.target;
      if (!(target instanceof HTMLInputElement) || !target.id.startsWith("cell-")) return;
      var text = (event.clipboardData || window.clipboardData).getData("text");
      var rows = text.replace(/[\[\]]/g, "\n").split(/[\n;]+/)
        .map(function (line) { return line.trim(); })
        .filter(function (line) { return line.length > 0; })
        .map(function (line) { return line.split(/[\s,]+/).filter(function (t) { return t.length > 0; }); });
      var count = rows.reduce(function (n, r) { return n + r.length; }, 0);
      if (count < 2) return; // one number: let the browser paste it normally
      event.preventDefault();
      var parts = target.id.split("-");
      var r0 = parseInt(parts[1], 10), c0 = parseInt(parts[2], 10);
      rows.forEach(function (row, i) {
        row.forEach(function (value, j) {
          var box = form.querySelector("#cell-" + (r0 + i) + "-" + (c0 + j));
          if (box && !box.readOnly) box.value = value;
        });
      });
    });
  });
});
