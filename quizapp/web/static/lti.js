// quizapp and the LMS (LTI): the cookie check before the sign-in, the automatic re-post of a
// launch and of the content chosen for the LMS.  Each page also works by hand without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var check = document.getElementById("lti-check");
  if (check) {
    var go = check.getAttribute("data-continue");
    var secure = window.location.protocol === "https:";
    var attrs = "; path=/" + (secure ? "; SameSite=None; Secure" : "");
    document.cookie = "quizapp_cookie_check=1" + attrs;
    if (document.cookie.indexOf("quizapp_cookie_check=1") !== -1) {
      document.cookie = "quizapp_cookie_check=; max-age=0" + attrs;
      window.location.replace(go);
    } else {
      document.getElementById("lti-checking").hidden = true;
      document.getElementById("lti-blocked").hidden = false;
    }
  }
  ["lti-relaunch", "lti-deep-link-return"].forEach(function (id) {
    var form = document.getElementById(id);
    if (form) form.submit();
  });
});
