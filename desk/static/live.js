// cosci desk: the live line. The page reads without this script; with it, the line
// follows the session (Server-Sent Events). Text only: nothing received becomes markup.
document.addEventListener("DOMContentLoaded", function () {
  var el = document.querySelector("[data-events]");
  if (!el || !window.EventSource) return;
  var src = new EventSource(el.getAttribute("data-events"));
  src.addEventListener("progress", function (e) { el.textContent = e.data; });
});
