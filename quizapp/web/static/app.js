// quizapp, on every page (each works without it; no build step): wide boxes become focusable
// labelled scroll regions; a verdict is announced. answer.js (an open answer form) uses window.quizapp.
"use strict";
(function () {
  var $ = function (s, el) { return (el || document).querySelector(s); };
  var $$ = function (s, el) { return (el || document).querySelectorAll(s); };
  var say = function (el, text, bad) { el.textContent = text; el.classList.toggle("bad", !!bad); };

  function markScrollers() {
    $$(".math-display,.table-wrap,.prompt,.hints,.solution,.chart").forEach(function (box) {
      var ours = box.dataset.scroller, wide = box.scrollWidth > box.clientWidth + 1;
      if (wide && !ours && !box.hasAttribute("tabindex") &&
          !$("a[href],button,input,select,textarea,[tabindex]", box)) {
        box.tabIndex = 0;
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", ($("table", box) ? "Table" :
          box.classList.contains("math-display") ? "Formula" : "Text") + " (scroll sideways to see all of it)");
        box.classList.add("scrolls");
        box.dataset.scroller = "1";
      } else if (!wide && ours) {
        ["tabindex", "role", "aria-label", "data-scroller"].forEach(function (a) { box.removeAttribute(a); });
        box.classList.remove("scrolls");
      }
    });
  }

  window.quizapp = { $: $, $$: $$, say: say, markScrollers: markScrollers };

  document.addEventListener("DOMContentLoaded", function () {
    var later;
    var markLater = function () { clearTimeout(later); later = setTimeout(markScrollers, 100); };
    markScrollers();
    // widths settle only once fonts and MathML are laid out (late on a slow or busy device)
    window.addEventListener("load", markScrollers);
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(markScrollers);
    window.addEventListener("resize", markLater);
    document.addEventListener("toggle", markLater, true); // a hint opened
    var verdict = $(".verdict[data-announce]"), live = $("#announce"), text = [];
    if (!verdict || !live) return;
    if (document.activeElement !== verdict) verdict.focus();
    $$("h2,.score,.message,.cell-problems li,.mistakes li", verdict).forEach(function (el) {
      text.push(el.textContent.replace(/\s+/g, " ").trim());
    });
    text.push("Attempts left: " + $("#attempts-left").textContent + ".");
    setTimeout(function () { live.textContent = text.join(" "); }, 300);
  });
})();
