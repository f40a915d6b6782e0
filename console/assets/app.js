// The console's page script: forms sent without leaving the page, edited
// arguments checked before they are sent, waiting times that tick, and the
// session's live event stream. Every form also works without it.
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  function human(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
    if (s < 172800) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
    return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-since]").forEach(function (el) {
      var t = Date.parse(el.dataset.since);
      if (!isNaN(t) && t > 0) el.textContent = "waiting " + human(now - t);
    });
    document.querySelectorAll("[data-deadline]").forEach(function (el) {
      var t = Date.parse(el.dataset.deadline);
      if (isNaN(t) || t <= 0) return;
      var left = t - now;
      el.textContent = "deadline " + new Date(t).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") +
        (left > 0 ? " (in " + human(left) + ")" : " (passed)");
    });
  }

  // checkJSON marks an arguments editor valid or not; true when valid.
  function checkJSON(area) {
    var msg = document.getElementById(area.getAttribute("aria-describedby"));
    var ok = true, text = "Valid JSON object.";
    try {
      var v = JSON.parse(area.value);
      if (v === null || typeof v !== "object" || Array.isArray(v)) { ok = false; text = "The arguments must be a JSON object."; }
    } catch (e) {
      ok = false; text = "Not valid JSON: " + e.message;
    }
    area.setAttribute("aria-invalid", ok ? "false" : "true");
    if (msg) { msg.textContent = text; msg.className = ok ? "hint" : "hint bad"; }
    return ok;
  }

  // The inbox count as the page shows it, kept true as calls are decided.
  var shown = parseInt(document.body.dataset.inboxCount || "0", 10);

  function showCount(n) {
    var count = document.getElementById("inbox-count");
    if (!count) return;
    count.textContent = n === 0 ? "Nothing waits for a person." :
      n + " call" + (n === 1 ? "" : "s") + " wait" + (n === 1 ? "s" : "") + " for a person, newest first.";
  }

  // decided marks a card whose call no longer waits; the inbox counts one
  // call less.
  function decided(card) {
    if (card.classList.contains("decided")) return;
    card.classList.add("decided");
    if (document.getElementById("inbox-count")) { shown = Math.max(0, shown - 1); showCount(shown); }
  }

  // cellOf sets the state cell of a call ("workflow|call") on the session
  // page, unless the cell already says something later: rank orders a
  // call's states (1 decided, 2 running, 3 finished), so that a decision's
  // answer that arrives after the stream's call_finished leaves "ok" shown.
  function cellOf(key, text, rank) {
    var cell = document.querySelector('[data-status-for="' + CSS.escape(key) + '"]');
    if (!cell) return;
    if ((+cell.dataset.rank || 0) > rank) return;
    cell.dataset.rank = String(rank);
    cell.textContent = text;
  }

  // workspaceCode shows, beside the remember control, that a rule over a
  // program that runs the workspace's code is consent to run it (T11): for
  // the pattern typed, else for the call's own command.
  function workspaceCode(p) {
    var form = p.closest("form"), input = form && form.querySelector('input[name="pattern"]');
    if (!input) return;
    var programs = (p.dataset.programs || "").split(" ");
    input.addEventListener("input", function () {
      var text = p.dataset.default || "", first = input.value.trim().split(/\s+/)[0];
      if (first) {
        var name = first.split("/").pop();
        text = programs.indexOf(name) >= 0 ? p.dataset.template.split("{program}").join(name) : "";
      }
      p.textContent = text;
      p.hidden = !text;
    });
  }

  function enhance(form) {
    var card = form.closest(".card");
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var button = ev.submitter;
      var data = new URLSearchParams(new FormData(form));
      if (button && button.name) data.set(button.name, button.value);
      var status = card && card.querySelector(".status");
      var alert = card && card.querySelector(".error");
      if (alert) alert.textContent = "";
      if (button && button.value === "approve_edited") {
        var area = form.querySelector("textarea[data-json]");
        if (area && !checkJSON(area)) { area.focus(); return; }
      }
      if (form.action.indexOf("/api/v1/cancel") >= 0 && !window.confirm("Cancel the whole round? Every call still gets a result.")) return;
      var buttons = form.querySelectorAll("button");
      buttons.forEach(function (b) { b.disabled = true; });
      fetch(form.action, {
        method: "POST", credentials: "same-origin", body: data,
        headers: { "Accept": "application/json", "X-CSRF-Token": csrf }
      }).then(function (resp) {
        return resp.json().catch(function () { return {}; }).then(function (body) { return { ok: resp.ok, status: resp.status, body: body }; });
      }).then(function (r) {
        if (!r.ok) {
          buttons.forEach(function (b) { b.disabled = false; });
          if (alert) alert.textContent = (r.body.error || ("HTTP " + r.status)) + (r.body.message ? ": " + r.body.message : "");
          return;
        }
        var b = r.body, text = "Done.", extended = typeof b.extended_seconds === "number";
        if (b.decision) {
          text = b.decision === "approved" ? "Approved by " + b.by + ", running." : "Denied by " + b.by + ".";
          if (card) {
            cellOf(card.dataset.card, b.decision === "approved" ? "approved by " + b.by : "denied by " + b.by + ", skipped", 1);
            decided(card);
          }
        } else if (b.answered && card) decided(card);
        if (b.answered) text = "Answer sent.";
        else if (extended) {
          text = b.extended_seconds > 0 ? "Deadline extended by " + human(b.extended_seconds * 1000) + "." :
            "Nothing added: the call already waits until 7 days after it began to wait, the most a call waits.";
          buttons.forEach(function (x) { x.disabled = false; });
        }
        else if (b.cancelled) text = "Round cancelled.";
        if (status) status.textContent = text;
        if (card && !extended) {
          decided(card);
          card.querySelectorAll("form button, form input, form textarea, form select").forEach(function (x) { x.disabled = true; });
          if (status) { status.setAttribute("tabindex", "-1"); status.focus(); }
        }
      }).catch(function (e) {
        buttons.forEach(function (b) { b.disabled = false; });
        if (alert) alert.textContent = "Could not reach the console: " + e.message;
      });
    });
  }

  function liveSession(session) {
    var live = document.getElementById("live");
    var list = document.getElementById("events");
    var notice = document.getElementById("notice");
    // after=0: the session's past events first, then the live ones; a
    // reconnection resumes after the last one seen (Last-Event-ID).
    var es = new EventSource("/api/v1/sessions/" + encodeURIComponent(session) + "/events?after=0");
    var rendered = Date.parse(document.body.dataset.rendered || "") || 0;
    es.onopen = function () { live.textContent = "Live: new events appear below."; live.dataset.live = "1"; };
    es.onerror = function () { live.textContent = "Event stream interrupted; reconnecting…"; live.dataset.live = "0"; };
    es.onmessage = function (m) {
      var e;
      try { e = JSON.parse(m.data); } catch (x) { return; }
      var li = document.createElement("li");
      li.textContent = (e.time || "").replace("T", " ").replace(/\.\d+Z$/, "Z") + "  round " + (e.round || 0) + "  " + e.type +
        (e.call_id ? "  " + e.call_id + " " + (e.tool || "") : "") + (e.status ? "  [" + e.status + "]" : "") +
        (e.type === "call_finished" ? "  " + (e.duration_ms || 0) + " ms" : "") + (e.detail ? "  " + e.detail : "");
      list.insertBefore(li, list.firstChild);
      while (list.children.length > 200) list.removeChild(list.lastChild);
      if (e.call_id && e.workflow_id) {
        var key = e.workflow_id + "|" + e.call_id;
        var cell = document.querySelector('[data-status-for="' + CSS.escape(key) + '"]');
        if ((e.type === "tool_result" || e.type === "call_finished") && e.status) cellOf(key, e.status, 3);
        else if (e.type === "call_started") cellOf(key, "running", 2);
        else if (e.type === "confirmation_answered" && cell && !cell.textContent.match(/ by /)) cellOf(key, e.detail || "answered", 1);
        // A call decided elsewhere (another tab, the CLI, the API) no
        // longer waits: its card says so and takes no decision.
        var card = document.querySelector('.card[data-card="' + CSS.escape(key) + '"]');
        if (card && e.type === "confirmation_answered" && !card.classList.contains("decided")) {
          var st = card.querySelector(".status");
          if (st) st.textContent = "Decided elsewhere: " + (e.detail || "answered") + ".";
          card.querySelectorAll("form button, form input, form textarea, form select").forEach(function (x) { x.disabled = true; });
          decided(card);
        }
      }
      if (e.type === "round_finished" && e.workflow_id) {
        var badge = document.querySelector('[data-round-status="' + CSS.escape(e.workflow_id) + '"]');
        if (badge) badge.textContent = "completed";
        // Nothing of a finished round waits: its cards go.
        var sec = document.querySelector('section.round[data-workflow="' + CSS.escape(e.workflow_id) + '"]');
        if (sec) sec.querySelectorAll(".card").forEach(function (c) { c.remove(); });
      }
      if ((e.type === "confirmation_requested" || e.type === "round_started") && notice &&
          Date.parse(e.time || "") >= rendered &&
          !document.querySelector('[data-workflow="' + CSS.escape(e.workflow_id || "") + '"]')) {
        notice.innerHTML = "";
        var a = document.createElement("a");
        a.href = location.pathname;
        a.textContent = "A new round started or waits for you: reload to see it.";
        notice.appendChild(a);
      }
    };
  }

  function pollInbox() {
    var summary = document.getElementById("inbox-summary");
    if (!summary) return;
    var filter = new URLSearchParams(location.search).get("session");
    setInterval(function () {
      fetch("/api/v1/inbox" + (filter ? "?session=" + encodeURIComponent(filter) : ""), { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (entries) {
          if (!entries) return;
          var n = 0;
          entries.forEach(function (e) { n += (e.pending || []).length; });
          if (n !== shown && !document.getElementById("inbox-changed")) {
            var p = document.createElement("p");
            p.id = "inbox-changed";
            p.className = "notice";
            var a = document.createElement("a");
            a.href = location.pathname + location.search;
            a.textContent = n + " call" + (n === 1 ? "" : "s") + " wait now: reload the inbox.";
            p.appendChild(a);
            summary.after(p);
          }
        }).catch(function () {});
    }, 10000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-enhance]").forEach(enhance);
    document.querySelectorAll("textarea[data-json]").forEach(function (a) {
      a.addEventListener("input", function () { checkJSON(a); });
    });
    document.querySelectorAll("p.workspace-code").forEach(workspaceCode);
    tick();
    setInterval(tick, 1000);
    if (document.body.dataset.session) liveSession(document.body.dataset.session);
    pollInbox();
  });
})();
