// quizapp progressive enhancement (every page works without it; no build step):
// boxes that scroll sideways become focusable labelled regions; after a submit the verdict
// (focused by autofocus) is announced in a live region.  The answer form's own code (preview,
// paste into the grid) is answer.js, which only a page with an open answer form loads; it uses
// window.quizapp (the helpers below).
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
