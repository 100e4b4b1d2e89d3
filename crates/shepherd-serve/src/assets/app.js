// Shepherd's dashboard: live updates. An element `#live` with
// `data-events` (a server-sent events URL) and `data-live-src` (a page
// holding a fresh `#live`) is refreshed whenever the server says the run
// changed. Forms are never touched: what an approver types stays.
"use strict";
(function () {
  function refresh(live) {
    fetch(live.dataset.liveSrc, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, "text/html");
        var fresh = doc.getElementById("live");
        if (!fresh) { return; }
        // Keep open <details> open across the refresh.
        var open = {};
        live.querySelectorAll("details[data-key]").forEach(function (d) { open[d.dataset.key] = d.open; });
        live.replaceChildren.apply(live, Array.prototype.slice.call(fresh.childNodes));
        live.querySelectorAll("details[data-key]").forEach(function (d) {
          if (d.dataset.key in open) { d.open = open[d.dataset.key]; }
        });
        live.dataset.version = String((Number(live.dataset.version) || 0) + 1);
        document.dispatchEvent(new CustomEvent("shepherd:refreshed"));
      })
      .catch(function () {});
  }
  // The "held" note of an approval row is true only while its decision
  // stays needs-human and its reply is the draft: hide it otherwise.
  function held() {
    document.querySelectorAll("#approval tr[data-item]").forEach(function (row) {
      var note = row.querySelector(".held");
      var decision = row.querySelector("select");
      var reply = row.querySelector("textarea");
      var draft = row.querySelector('input[name^="orig-reply-"]');
      if (!note || !decision || !reply || !draft) { return; }
      note.hidden = decision.value !== "needs-human" ||
        reply.value.replace(/\r\n/g, "\n") !== draft.value.replace(/\r\n/g, "\n");
    });
  }
  function start() {
    var approval = document.getElementById("approval");
    if (approval) {
      approval.addEventListener("input", held);
      approval.addEventListener("change", held);
    }
    var live = document.getElementById("live");
    if (!live || !live.dataset.events || !window.EventSource) { return; }
    // The first event says where things stand (it may already differ from
    // the rendered page); every later one, that something changed.
    var source = new EventSource(live.dataset.events);
    source.addEventListener("change", function () { refresh(live); });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
