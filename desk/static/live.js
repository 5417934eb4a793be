// cosci desk: what the pages do with a script. Every page reads without it; with it,
// - times read as people say them, in the viewer's own time zone ("3 min ago",
//   "yesterday 14:05"), the exact time on hover;
// - a session's page follows the session (Server-Sent Events): the live line, and the
//   parts the desk sends as they change, rendered and escaped by the desk, until the desk
//   ends the stream and says why (a sign-out, a share taken back);
// - the title counts the sessions that wait for you, and, if you ask for it, the browser
//   tells you when one starts waiting.
// Nothing received becomes markup but the parts the desk rendered itself.
(function () {
  "use strict";

  // Times.
  var clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
  var weekday = new Intl.DateTimeFormat(undefined, { weekday: "short" });
  var dayMonth = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
  var full = new Intl.DateTimeFormat(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
  var date = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });

  function startOfDay(d) { return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime(); }

  // readable is a moment as people say it, relative to now, in the viewer's time zone.
  function readable(t, now) {
    var ago = (now - t) / 1000;
    if (ago < 45) return "just now";
    if (ago < 3600) return Math.round(ago / 60) + " min ago";
    var days = Math.round((startOfDay(now) - startOfDay(t)) / 86400000);
    if (days === 0) return "today " + clock.format(t);
    if (days === 1) return "yesterday " + clock.format(t);
    if (days > 1 && days < 7) return weekday.format(t) + " " + clock.format(t);
    if (t.getFullYear() === now.getFullYear()) return dayMonth.format(t) + " " + clock.format(t);
    return date.format(t);
  }

  function times(root) {
    var now = new Date();
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var t = new Date(el.getAttribute("datetime"));
      if (isNaN(t.getTime())) return;
      el.textContent = readable(t, now);
      el.title = full.format(t);
    });
  }

  // The live parts of a session's page.
  function replace(el, html) {
    // A part the person is typing in, or has focused, waits until they leave it.
    if (el.contains(document.activeElement) && document.activeElement !== document.body) {
      el.dataset.pending = html;
      return;
    }
    var open = [];
    el.querySelectorAll("details[id][open]").forEach(function (d) { open.push(d.id); });
    el.innerHTML = html;
    open.forEach(function (id) {
      var d = document.getElementById(id);
      if (d) d.open = true;
    });
    times(el);
  }

  function follow(line) {
    if (!window.EventSource) return;
    var src = new EventSource(line.getAttribute("data-events"));
    src.addEventListener("progress", function (e) { line.textContent = e.data; });
    // The desk ends a stream whose access was taken away, saying why: no reconnecting.
    src.addEventListener("end", function (e) {
      src.close();
      line.textContent = "No longer live: " + e.data;
    });
    src.addEventListener("part", function (e) {
      var part;
      try { part = JSON.parse(e.data); } catch (err) { return; }
      var el = document.getElementById(part.id);
      if (el && typeof part.html === "string") replace(el, part.html);
    });
    document.addEventListener("focusout", function () {
      setTimeout(function () {
        document.querySelectorAll("[data-pending]").forEach(function (el) {
          if (el.contains(document.activeElement)) return;
          var html = el.dataset.pending;
          delete el.dataset.pending;
          replace(el, html);
        });
      }, 0);
    });
  }

  // What waits for you.
  var base = document.title.replace(/^\(\d+\) /, "");
  var seen = null;

  function notifying() {
    return window.Notification && Notification.permission === "granted" && localStorage.getItem("cosci-notify") === "on";
  }

  function needs() {
    fetch("/needs", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (n) {
        if (!n) return;
        document.title = (n.count > 0 ? "(" + n.count + ") " : "") + base;
        var now = {};
        n.sessions.forEach(function (s) {
          now[s.id] = true;
          if (seen && !seen[s.id] && notifying()) {
            new Notification("A session waits for you: " + s.id, { body: s.why, tag: "cosci-" + s.id });
          }
        });
        seen = now;
      })
      .catch(function () {});
  }

  function offerNotifications() {
    var button = document.getElementById("notify");
    if (!button || !window.Notification) return;
    button.hidden = notifying() || Notification.permission === "denied";
    button.addEventListener("click", function () {
      Notification.requestPermission().then(function (p) {
        if (p === "granted") {
          localStorage.setItem("cosci-notify", "on");
          button.hidden = true;
        }
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    times(document);
    setInterval(function () { times(document); }, 30000);
    var line = document.querySelector("[data-events]");
    if (line) follow(line);
    if (document.querySelector(".bar .who")) {
      offerNotifications();
      needs();
      setInterval(needs, 15000);
    }
  });
})();
