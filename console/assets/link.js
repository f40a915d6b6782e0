// The signed-link page (N2): the token is in the URL's fragment, which no
// request carries; the page shows what it decides, as text only, and posts
// it when the person confirms. Nothing is decided before the click.
(function () {
  "use strict";
  var token = decodeURIComponent((location.hash || "").replace(/^#/, ""));
  history.replaceState(null, "", location.pathname); // the token leaves the address bar
  var what = document.getElementById("link-what");
  var link;
  try {
    var body = token.split(".")[0].replace(/-/g, "+").replace(/_/g, "/");
    link = JSON.parse(atob(body));
  } catch (e) {
    what.textContent = "This link is not complete: open it as the message gave it.";
    return;
  }
  var set = function (id, text) { document.getElementById(id).textContent = String(text); };
  set("link-decision", link.d === "approve" ? "approve" : "deny");
  set("link-workflow", link.w);
  set("link-callid", link.c);
  set("link-by", link.b);
  set("link-expires", new Date(link.e * 1000).toISOString());
  what.textContent = "Confirm to " + (link.d === "approve" ? "approve" : "deny") + " the call below.";
  document.getElementById("link-token").value = token;
  document.getElementById("link-call").hidden = false;
  document.getElementById("link-form").hidden = false;
  // What the call does (T14): read with the token, shown as text only.
  set("link-tool", "…");
  fetch("/link/call", {method: "POST", body: new URLSearchParams({token: token}), credentials: "omit", referrerPolicy: "no-referrer"})
    .then(function (r) { return r.json().then(function (v) { return {ok: r.ok, v: v}; }); })
    .then(function (a) {
      if (!a.ok) { set("link-tool", a.v.error || "The call could not be read."); return; }
      var c = a.v;
      if (!c.tool) { set("link-tool", "The call does not wait any more."); return; }
      set("link-tool", c.tool + (c.waiting ? "" : " (it waits for another decision now)"));
      set("link-reasons", (c.reasons || []).join("; "));
      set("link-args", c.arguments + (c.cut ? "\n… " + c.cut + " more characters" : ""));
      var p = c.preview;
      if (p) {
        var note;
        if (p.unavailable) { note = "The preview is unavailable: " + p.unavailable; }
        else if (!p.exists) { note = "There is no file there now: the call creates it."; }
        else if (p.key_file) { note = p.size + " bytes · a key file: only its size is shown"; }
        else if (p.binary) { note = p.size + " bytes · not text: no line is shown"; }
        else { note = p.size + " bytes · its first " + (p.lines || []).length + " lines" + (p.more ? ", of more" : "") + ", read now and kept nowhere"; }
        set("link-preview-note", note);
        set("link-preview", (p.lines || []).join("\n"));
        document.getElementById("link-preview").hidden = !(p.lines && p.lines.length);
        document.getElementById("link-preview-h").hidden = false;
        document.getElementById("link-preview-d").hidden = false;
      }
    })
    .catch(function () { set("link-tool", "The call could not be read."); });
})();
