// Re-run forms: when the provider changes, and on every page show, the model field takes that provider's
// default, unless the reader typed a model of their own. It reads only attributes the server rendered.
// After an htmx Re-run, the form takes the fresh idempotency key the server sent, so the next press
// is a new run while a double click (one key) stays one run.
(function () {
  "use strict";
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail && event.detail.elt;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-rerun-form")) return;
    var next = event.detail.xhr && event.detail.xhr.getResponseHeader("X-Next-Idempotency-Key");
    var input = form.querySelector("[data-idempotency-key]");
    if (next && input) input.value = next;
  });
  // A card's Re-run runs in place: the run's live region goes right after the card (the card itself is
  // hx-disable, so the region must sit outside it to poll), and the reader stays where they were.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-card-rerun-form") || !window.htmx) return;
    var card = form.closest("[data-msg-id]");
    if (!card) return;
    event.preventDefault();
    var button = form.querySelector("[data-rerun-submit]");
    if (button) button.disabled = true;
    var done = function () { if (button) button.disabled = false; };
    window.htmx.ajax("POST", form.getAttribute("action"), { source: form, target: card, swap: "afterend" })
      .then(done, done);
  });
  // A model the reader typed is theirs ("as typed" ticked); otherwise the model is the provider's default.
  function follow(form) {
    var select = form.querySelector("[data-rerun-provider]");
    var model = form.querySelector("[data-rerun-model]");
    var typed = form.querySelector("[data-rerun-as-typed]");
    var option = select && select.selectedOptions[0];
    if (!model || !option || (typed && typed.checked)) return;
    model.value = option.getAttribute("data-default-model") || "";
  }
  document.addEventListener("input", function (event) {
    var el = event.target;
    if (!(el instanceof HTMLInputElement) || !el.hasAttribute("data-rerun-model") || !el.form) return;
    var typed = el.form.querySelector("[data-rerun-as-typed]");
    if (typed) typed.checked = true;
  });
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select instanceof HTMLSelectElement && select.hasAttribute("data-rerun-provider") && select.form) {
      follow(select.form);
    }
  });
  // Every page show, the back/forward cache's included: the browser may have restored the provider but not
  // the model (autocomplete=off), which would send one provider's model to another.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-rerun-form]").forEach(follow);
  });
})();
