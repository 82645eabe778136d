// Small page behaviours, declared in the markup with data- attributes: the Content-Security-Policy
// runs no inline script or handler (onclick=, onchange=), only files like this one.
(function () {
  document.addEventListener("click", function (event) {
    var target = event.target.closest("[data-print], [data-copy], [data-confirm]");
    if (!target) return;
    if (target.hasAttribute("data-confirm") && !window.confirm(target.getAttribute("data-confirm"))) {
      event.preventDefault();
      return;
    }
    if (target.hasAttribute("data-print")) window.print();
    if (target.hasAttribute("data-copy")) {
      var source = document.getElementById(target.getAttribute("data-copy"));
      if (source && navigator.clipboard) navigator.clipboard.writeText(source.textContent);
    }
  });
  document.addEventListener("change", function (event) {
    if (event.target.matches("[data-autosubmit]")) event.target.form.requestSubmit();
  });
})();
