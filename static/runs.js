// Re-run forms: when the provider changes, the model field takes that provider's default,
// unless the reader typed a model of their own. It reads only attributes the server rendered.
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
  document.addEventListener("input", function (event) {
    var el = event.target;
    if (el instanceof HTMLInputElement && el.hasAttribute("data-rerun-model")) el.setAttribute("data-touched", "");
  });
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!(select instanceof HTMLSelectElement) || !select.hasAttribute("data-rerun-provider")) return;
    var form = select.form;
    var model = form && form.querySelector("[data-rerun-model]");
    var option = select.selectedOptions[0];
    if (model && option && !model.hasAttribute("data-touched")) {
      model.value = option.getAttribute("data-default-model") || "";
    }
  });
})();
