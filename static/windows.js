// A body shown by windows (web/payloads/windows.py). Each window not loaded yet is a placeholder that htmx
// fills from the server when it scrolls into view; this script fills one early when the reader points at
// something whose part of the body is in it: a card (the page ships a map card -> window; the map of every
// card is a request away), or a change of the diff summary (its list item names its windows). It never
// builds HTML: it only asks htmx to load a placeholder the server wrote.
(function () {
  "use strict";

  var map = null;
  var fullMap = null; // null: not asked yet; a promise once asked
  var goTo = null;

  function cardMap() {
    if (map) return map;
    var holder = document.querySelector("[data-windows-map]");
    map = holder ? JSON.parse(holder.getAttribute("data-windows-map") || "{}") : {};
    return map;
  }

  function load(id) {
    var el = document.getElementById(id);
    if (!el || !el.hasAttribute("data-window-pending") || el.hasAttribute("data-asked") || !window.htmx) return;
    window.htmx.trigger(el, "tl-load");
  }

  // A placeholder asks once (scrolled into view, or pointed at), unless the server asks to retry.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.hasAttribute && elt.hasAttribute("data-window-pending")) elt.setAttribute("data-asked", "");
  });

  function loaded(key) {
    return document.querySelector('pre.json [data-hl="' + CSS.escape(key) + '"]') !== null;
  }

  // The placeholders an element needs: those its data-windows names (diff changes), or its card's window.
  function windowsOf(holder, key) {
    var named = holder.getAttribute("data-windows");
    if (named) return named.split(" ");
    var pane = document.querySelector("pre.json[data-windows-pane]");
    var n = cardMap()[key];
    return pane && n !== undefined ? [pane.id + "-w" + n] : [];
  }

  function bring(holder, key) {
    if (holder.closest("pre.json") || loaded(key)) return;
    var ids = windowsOf(holder, key);
    if (ids.length) { ids.forEach(load); return; }
    var source = document.querySelector("[data-windows-map-url]");
    if (!source || fullMap !== null) return;
    // A card the page loaded later: ask once for the map of every card.
    fullMap = fetch(source.getAttribute("data-windows-map-url"), {
      credentials: "same-origin", headers: { Accept: "application/json" }
    }).then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (all) { Object.assign(cardMap(), all); windowsOf(holder, key).forEach(load); },
            function () { fullMap = null; });
  }

  document.addEventListener("mouseover", function (event) {
    var holder = event.target.closest && event.target.closest("[data-hl]");
    if (holder) bring(holder, holder.getAttribute("data-hl"));
  });

  // A click on a change whose part is not loaded: load it, then scroll its pane there once it is in.
  document.addEventListener("click", function (event) {
    var holder = event.target.closest && event.target.closest("[data-hl]");
    if (!holder) return;
    var key = holder.getAttribute("data-hl");
    if (loaded(key)) return;
    goTo = key;
    bring(holder, key);
  });

  // A window the server could not send now (every slot for heavy work taken: 503) is asked again shortly.
  var RETRIES = 5;
  document.addEventListener("htmx:responseError", function (event) {
    var elt = event.detail && event.detail.elt;
    if (!elt || !elt.hasAttribute || !elt.hasAttribute("data-window-pending")) return;
    var tries = Number(elt.getAttribute("data-tries") || "0") + 1;
    elt.setAttribute("data-tries", String(tries));
    if (tries <= RETRIES && event.detail.xhr && event.detail.xhr.status === 503) {
      setTimeout(function () { window.htmx.trigger(elt, "tl-load"); }, 400 * tries);
    }
  });

  document.addEventListener("htmx:afterSettle", function () {
    if (!goTo || !loaded(goTo)) return;
    var key = goTo;
    goTo = null;
    document.querySelectorAll('pre.json [data-hl="' + CSS.escape(key) + '"]').forEach(function (el) {
      var box = el.closest("[data-pane]");
      if (!box) { el.scrollIntoView({ block: "center" }); return; }
      box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - 40;
    });
  });
})();
