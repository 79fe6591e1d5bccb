// Traceloupe's only script besides htmx. It never builds HTML from trace data: it moves focus,
// toggles <details>, sets an <img> src from an attribute the server already vetted, and asks
// the server for more cards when a link points at one that is not loaded yet.
(function () {
  "use strict";

  var INLINE_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+\/=]+$/;

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-nav-item]")).filter(function (el) {
      return el.offsetParent !== null; // visible only: cards inside a closed history are skipped
    });
  }

  function current(list) {
    var active = document.activeElement;
    for (var i = 0; i < list.length; i++) {
      if (list[i] === active || list[i].contains(active)) return i;
    }
    return -1;
  }

  function move(step) {
    var list = items();
    if (!list.length) return;
    var i = current(list);
    var next = list[Math.max(0, Math.min(list.length - 1, i < 0 ? 0 : i + step))];
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "nearest" });
  }

  function toggleDetails() {
    var el = document.activeElement;
    if (!el || !el.matches("[data-nav-item]")) return false;
    if (el.tagName === "A") return false; // Enter follows the link
    var details = el.querySelector("details");
    if (details) details.open = !details.open;
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target && event.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    if (event.key === "j") { move(1); event.preventDefault(); }
    else if (event.key === "k") { move(-1); event.preventDefault(); }
    else if ((event.key === "o" || event.key === "Enter") && toggleDetails()) { event.preventDefault(); }
    else if (event.key === "/") {
      var search = document.querySelector("[data-search]");
      if (search) { search.focus(); event.preventDefault(); }
    }
  });

  // Inline data: images are shown only when asked, and only raster types.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-show-inline]");
    if (!button) return;
    var src = button.getAttribute("data-src") || "";
    if (!INLINE_IMAGE.test(src)) return;
    var img = document.createElement("img");
    img.className = "loc__img";
    img.alt = "inline image from the trace";
    img.src = src;
    button.replaceWith(img);
  });

  function reveal(el) {
    var card = el.closest("[data-msg-id]") || el;
    var details = card.parentElement && card.parentElement.closest("details");
    while (details) { details.open = true; details = details.parentElement && details.parentElement.closest("details"); }
    el.scrollIntoView({ block: "start" });
    card.classList.add("is-target");
    el.classList.remove("is-flash");
    void el.offsetWidth;
    el.classList.add("is-flash");
    card.focus({ preventScroll: true });
    setTimeout(function () { card.classList.remove("is-target"); }, 2500);
  }

  // A link to a card on a page not loaded yet: load every page up to it, then scroll. The server
  // refuses to load more than a bounded number of cards at once; then open the card's own page.
  function goTo(anchor, cardAnchor) {
    var el = document.getElementById(anchor);
    if (el) { reveal(el); return; }
    var more = document.querySelector("[data-next-page]");
    var timeline = document.getElementById("timeline");
    if (!more || !window.htmx || !timeline) return;
    var target = cardAnchor || anchor;
    var url = more.getAttribute("data-next-page") + "&through=" + encodeURIComponent(target);
    window.htmx.ajax("GET", url, { target: more, swap: "outerHTML" }).then(function () {
      var found = document.getElementById(anchor);
      if (found) { reveal(found); return; }
      if (new URLSearchParams(location.search).get("at") === target) return; // already tried: not in this conversation
      location.assign(timeline.getAttribute("data-base-url") + "?at=" + encodeURIComponent(target) + "#" + anchor);
    });
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-jump], a.card__permalink");
    if (!link) return;
    var anchor = (link.getAttribute("href") || "").slice(1);
    if (!anchor) return;
    event.preventDefault();
    history.pushState(null, "", "#" + anchor);
    goTo(anchor, link.getAttribute("data-card"));
  });

  function fromHash() {
    var anchor = decodeURIComponent(location.hash.slice(1));
    if (!anchor) return;
    var cardAnchor = anchor.indexOf("msg-") === 0 ? anchor : null;
    goTo(anchor, cardAnchor);
  }

  // A next-page request that fails leaves a plain link that says so, instead of "Loading…" forever.
  function nextPageFailed(event) {
    var elt = event.detail && event.detail.elt;
    if (!elt || !elt.matches || !elt.matches("[data-next-page]")) return;
    var xhr = event.detail.xhr;
    var why = xhr && xhr.status ? "the server answered " + xhr.status : "the server did not answer";
    elt.textContent = "Could not load more cards (" + why + "). Follow this link to open them.";
    elt.classList.add("more--failed");
  }
  document.addEventListener("htmx:responseError", nextPageFailed);
  document.addEventListener("htmx:sendError", nextPageFailed);

  window.addEventListener("hashchange", fromHash);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fromHash);
  else fromHash();
})();
