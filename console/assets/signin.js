// The one-time sign-in link: its code is in the URL's fragment, which no
// request carries. The page takes it out of the address bar and posts it;
// the console answers with the session cookie, once.
(function () {
  "use strict";
  var code = decodeURIComponent((location.hash || "").replace(/^#/, ""));
  history.replaceState(null, "", location.pathname); // the code leaves the address bar
  if (!code) {
    document.getElementById("signin-what").textContent = "This link is not complete: open it as the console printed it, or sign in with the token.";
    return;
  }
  document.getElementById("signin-code").value = code;
  document.getElementById("signin-form").submit();
})();
