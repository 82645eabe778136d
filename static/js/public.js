// The public pages are cached whole and shared by every visitor, so they carry no CSRF token:
// requests read it from the csrftoken cookie that each response sets.
(function () {
  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  document.addEventListener("htmx:configRequest", function (event) {
    event.detail.headers["X-CSRFToken"] = csrfToken();
  });
  document.addEventListener("submit", function (event) {
    var field = event.target.querySelector("input[data-csrf-from-cookie]");
    if (field) field.value = csrfToken();
  }, true);
})();

// A form is sent once: a second click (or a double tap) while the first is on its way sends
// nothing. htmx forms drop it themselves (hx-sync); a plain form's page is leaving anyway.
(function () {
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.hasAttribute("hx-post") || form.hasAttribute("hx-get")) return;
    if (form.dataset.sent) {
      event.preventDefault();
      event.stopImmediatePropagation();
      return;
    }
    form.dataset.sent = "1";
    // An answer that leaves the page where it is (a file download) frees the form again.
    setTimeout(function () { delete form.dataset.sent; }, 8000);
  });
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-sent]").forEach(function (form) { delete form.dataset.sent; });
  });
})();

// The WhatsApp number the person just proved is written into the bank form when it is still empty.
(function () {
  function prefill() {
    var note = document.getElementById("payee-note");
    var phone = document.getElementById("id_phone");
    if (note && phone && !phone.value && note.dataset.knownPhone) phone.value = note.dataset.knownPhone;
  }
  document.addEventListener("htmx:afterSettle", prefill);
})();

// Moments in the reader's own time zone and language: the server wrote them in UTC.
(function () {
  // English the European way, day before month, as the pages have it (config/formats/en).
  var language = document.documentElement.lang === "en" ? "en-GB" : document.documentElement.lang || undefined;
  function localise(root) {
    (root || document).querySelectorAll("time[data-local]").forEach(function (element) {
      var moment = new Date(element.getAttribute("datetime"));
      var options = element.dataset.local === "date"
        ? { dateStyle: "long" }
        : { dateStyle: "medium", timeStyle: "short" };
      try {
        element.textContent = new Intl.DateTimeFormat(language, options).format(moment);
        element.removeAttribute("data-local");
      } catch (error) { /* an old browser keeps the server's UTC wording */ }
    });
  }
  document.addEventListener("DOMContentLoaded", function () { localise(document); });
  document.addEventListener("htmx:afterSettle", function (event) { localise(event.detail.elt); });
})();
