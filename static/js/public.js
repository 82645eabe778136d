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
