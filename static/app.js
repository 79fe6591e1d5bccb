// Traceloupe's only script besides htmx. It never builds HTML from trace data: it moves focus,
// toggles <details> and classes, sets an <img> src from an attribute the server already vetted,
// copies text the page already holds, and asks the server for more cards when a link points at
// one that is not loaded yet, and shows the text of a failed request's error answer where it was made.
(function () {
  "use strict";

  var INLINE_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+\/=]+$/;
  // An attachment under the attachments root: the server checks its magic bytes before serving it inline.
  var ATTACHMENT_IMAGE = /^\/attachments\/[^?#]+\?inline=1$/;

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
    if (!INLINE_IMAGE.test(src) && !ATTACHMENT_IMAGE.test(src)) return;
    var img = document.createElement("img");
    img.className = "loc__img";
    img.alt = "inline image from the trace";
    img.addEventListener("error", function () {
      var note = document.createElement("span");
      note.className = "muted";
      note.textContent = "not shown: the file is missing or is not an image the dashboard displays";
      img.replaceWith(note);
    });
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
    // A link into another page's timeline (a run's original card) navigates; one into this timeline jumps.
    if (link.pathname !== location.pathname) return;
    var anchor = link.hash.slice(1);
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

  // Linked highlighting: elements that share a data-hl value light up together (a card and the payload
  // nodes it became, a warning and its card, the two sides of one diff change). Only classes change.
  var litKey = null;
  var lit = [];
  var scrollTimer = null;

  function pane(el) { return el.closest && el.closest("[data-pane]"); }

  function showInPane(el) {
    var box = pane(el);
    if (!box) return;
    var top = el.getBoundingClientRect().top - box.getBoundingClientRect().top;
    if (top < 0 || top > box.clientHeight - 20) box.scrollTop += top - 40;
  }

  function bringLinkedIntoView(hovered) {
    // Never scroll the pane under the pointer's own JSON (it would move what is being read).
    var from = hovered.closest("pre.json") ? pane(hovered) : undefined;
    var seen = [];
    lit.forEach(function (el) {
      if (el === hovered || el.contains(hovered) || hovered.contains(el)) return;
      var box = pane(el);
      if (box === from || seen.indexOf(box) >= 0) return;
      seen.push(box);
      if (box) { showInPane(el); return; }
      var r = el.getBoundingClientRect();
      if (r.bottom < 0 || r.top > window.innerHeight) el.scrollIntoView({ block: "nearest" });
    });
  }

  var litHolder = null;

  function light(holder, key) {
    lit.forEach(function (el) { el.classList.remove("is-linked"); });
    lit = [];
    litKey = key;
    litHolder = holder;
    clearTimeout(scrollTimer);
    if (!key) return;
    lit = Array.prototype.slice.call(document.querySelectorAll('[data-hl="' + CSS.escape(key) + '"]'));
    if (lit.length < 2) { lit = []; return; } // nothing else on the page to link to (the timeline alone)
    lit.forEach(function (el) { el.classList.add("is-linked"); });
    scrollTimer = setTimeout(function () { bringLinkedIntoView(holder); }, 120);
  }

  document.addEventListener("mouseover", function (event) {
    var holder = event.target.closest && event.target.closest("[data-hl]");
    var key = holder ? holder.getAttribute("data-hl") : null;
    if (key === litKey) return;
    light(holder, key);
  });

  // A window of a body arrived (static/windows.js loads it, often for the element under the pointer): light
  // its part of what is lit now.
  document.addEventListener("htmx:afterSettle", function (event) {
    var elt = event.detail && event.detail.elt;
    if (litKey && litHolder && elt && elt.closest && elt.closest("pre.json")) light(litHolder, litKey);
  });

  // A change in the diff summary: scroll each body's pane to it (the window stays where it is).
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-goto]");
    if (!link) return;
    event.preventDefault();
    var key = link.getAttribute("data-goto");
    document.querySelectorAll('[data-pane] [data-hl="' + CSS.escape(key) + '"]').forEach(function (el) {
      showInPane(el);
      el.classList.remove("is-flash");
      void el.offsetWidth;
      el.classList.add("is-flash");
    });
  });

  // Cards whose message is not in the request shown (after the cut, or dropped) are shown hollow.
  function markAbsent() {
    var body = document.querySelector("#payload-json[data-json-complete='true']");
    if (!body) return;
    document.querySelectorAll("#timeline [data-msg-id][data-hl]").forEach(function (card) {
      var key = card.getAttribute("data-hl");
      card.classList.toggle("is-absent", !body.querySelector('[data-hl="' + CSS.escape(key) + '"]'));
    });
  }
  document.addEventListener("htmx:afterSettle", markAbsent);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", markAbsent);
  else markAbsent();

  // Copy the exact JSON: the page's own text when the whole body is shown, else the whole body, pretty-printed
  // as on the page, from the server (data-copy-url).
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    var text = source.getAttribute("data-json-complete") === "true"
      ? Promise.resolve(source.textContent)
      : fetch(button.getAttribute("data-copy-url"), { credentials: "same-origin" })
          .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); });
    text.then(function (t) { return navigator.clipboard.writeText(t); }).then(function () {
      button.textContent = "Copied";
      button.classList.add("is-done");
    }, function () {
      var range = document.createRange();
      range.selectNodeContents(source);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = "Selected: press Ctrl+C";
    }).then(function () {
      setTimeout(function () { button.textContent = label; button.classList.remove("is-done"); }, 2000);
    });
  });

  // A select that picks what the page shows submits its (GET) form; the button stays for keyboards and no-JS.
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select && select.matches && select.matches("select[data-autosubmit]") && select.form) select.form.requestSubmit();
  });

  // The list's form leaves out what is at its default, so the URL says only what narrows the list.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form[data-list-query]")) return;
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name) return;
      if (el.value === "" || (el.name === "sort" && el.value === "recent")) el.disabled = true;
    });
    setTimeout(function () { Array.prototype.forEach.call(form.elements, function (el) { el.disabled = false; }); }, 0);
  });

  function getJson(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); });
  }

  function secretButton(digest, text) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secret";
    button.setAttribute("data-secret", digest);
    button.title = "A secret, masked: click to reveal this value";
    button.textContent = text;
    return button;
  }

  // A masked secret (web/masking.py): a click asks the server for that one value and shows it as text.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-secret]");
    if (!button) return;
    var holder = button.closest("[data-secrets-url]") || document.querySelector("[data-secrets-url]");
    if (!holder) return;
    var url = holder.getAttribute("data-secrets-url") + encodeURIComponent(button.getAttribute("data-secret"));
    getJson(url).then(function (d) {
      var code = document.createElement("code");
      code.className = "secret is-revealed";
      code.setAttribute("data-revealed", "");
      // Inside a JSON body the value is shown as JSON writes it, like the text around it.
      code.textContent = button.closest("pre.json") ? JSON.stringify(d.value).slice(1, -1) : d.value;
      button.replaceWith(code);
    }, function () { button.title = "Could not reveal this value"; });
  });

  // "show all" on collapsed text: the whole field from the server (secrets still masked), or, where the page
  // already holds it, the text uncollapsed. If the fetch fails the link stays a link to the field's own page.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("[data-show-all]");
    if (!link) return;
    var box = link.closest("[data-longtext]");
    var pre = box && box.querySelector("pre");
    if (!pre) return;
    event.preventDefault();
    function expand() {
      pre.classList.remove("is-collapsed");
      pre.removeAttribute("data-collapsed");
      pre.setAttribute("data-expanded", "");
      link.remove();
    }
    var api = link.getAttribute("data-field-api");
    if (!api) { expand(); return; }
    var label = link.textContent;
    link.textContent = "loading…";
    getJson(api).then(function (d) {
      var target = pre.querySelector("code") || pre;
      target.textContent = "";
      d.pieces.forEach(function (p) {
        target.appendChild(p.secret ? secretButton(p.secret, p.text) : document.createTextNode(p.text));
      });
      expand();
    }, function () {
      link.textContent = label + ": could not load it here, follow this link";
      link.removeAttribute("data-show-all");
    });
  });

  // Every htmx request that fails says why where it was made, never nothing: the server's own words (its
  // error page's heading and detail, read as text from an inert parse) or that it did not answer.
  var shownErrors = new WeakMap();

  function serverWords(xhr) {
    var type = xhr.getResponseHeader("content-type") || "";
    try {
      if (type.indexOf("json") !== -1) return String(JSON.parse(xhr.responseText).detail || "");
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var error = doc.querySelector("[data-error]");
      var detail = error && error.querySelector("p");
      return detail ? detail.textContent.trim() : "";
    } catch (e) {
      return "";
    }
  }

  function failureText(event) {
    var xhr = event.detail && event.detail.xhr;
    if (event.type !== "htmx:responseError" || !xhr || !xhr.status) {
      return "The server did not answer; nothing was changed. Try again.";
    }
    var words = serverWords(xhr);
    var text = xhr.status + " " + (xhr.statusText || "error") + (words ? ": " + words : "");
    // A refused role says what would help; any other 403 is a stale form's token.
    if (xhr.status === 403 && words.indexOf(" role") === -1) text += " (reload the page for a fresh form, then try again)";
    return text;
  }

  function showFailure(event) {
    var elt = event.detail && event.detail.elt;
    if (!elt || (elt.matches && elt.matches("[data-next-page]"))) return; // that link says so itself
    var box = shownErrors.get(elt);
    if (!box) {
      box = document.createElement("p");
      box.className = "warn htmx-error";
      box.setAttribute("role", "alert");
      box.setAttribute("data-htmx-error", "");
      shownErrors.set(elt, box);
    }
    box.textContent = failureText(event);
    var inPage = elt.isConnected && elt !== document.body && elt !== document.documentElement;
    if (inPage) elt.insertAdjacentElement("afterend", box);
    else (document.querySelector("[data-htmx-errors]") || document.body).appendChild(box);
  }

  document.addEventListener("htmx:responseError", showFailure);
  document.addEventListener("htmx:sendError", showFailure);
  document.addEventListener("htmx:timeout", showFailure);
  document.addEventListener("htmx:afterRequest", function (event) {
    var box = event.detail && event.detail.successful && shownErrors.get(event.detail.elt);
    if (box) box.remove();
  });

  window.addEventListener("hashchange", fromHash);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fromHash);
  else fromHash();
})();
