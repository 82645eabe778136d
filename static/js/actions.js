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
  // The menu button of narrow screens: it opens and closes the links it controls; Escape closes
  // them and gives the focus back to the button.
  var toggle = document.querySelector("[data-menu-toggle]");
  var menu = toggle && document.getElementById(toggle.getAttribute("aria-controls"));
  if (toggle && menu) {
    var setOpen = function (open) {
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      menu.classList.toggle("open", open);
    };
    toggle.hidden = false;
    toggle.parentElement.classList.add("menu-ready");
    toggle.addEventListener("click", function () {
      setOpen(toggle.getAttribute("aria-expanded") !== "true");
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && toggle.getAttribute("aria-expanded") === "true") {
        setOpen(false);
        toggle.focus();
      }
    });
  }
  // The rule editor shows the fields of the chosen action only; the hidden ones are disabled, so
  // what the person cannot see is not sent either.
  var ruleFieldsShow = function (form) {
    var trigger = form.querySelector("[name=trigger]");
    if (!trigger) return;
    form.querySelectorAll("[data-show-for]").forEach(function (field) {
      var shown = field.getAttribute("data-show-for").split(" ").indexOf(trigger.value) !== -1;
      field.hidden = !shown;
      field.querySelectorAll("input, select, textarea").forEach(function (input) {
        input.disabled = !shown;
      });
    });
  };
  document.querySelectorAll("[data-rule-form]").forEach(ruleFieldsShow);
  // A new campaign's preview follows its headline and description as they are typed.
  document.addEventListener("input", function (event) {
    var form = event.target.closest("[data-live-preview]");
    if (!form) return;
    var shown = document.querySelector('[data-preview-of="' + event.target.name + '"]');
    if (shown) shown.textContent = event.target.value;
  });
  document.addEventListener("change", function (event) {
    if (event.target.matches("[data-rule-form] [name=trigger]")) ruleFieldsShow(event.target.form);
  });
  document.addEventListener("change", function (event) {
    if (event.target.matches("[data-autosubmit]")) event.target.form.requestSubmit();
  });
})();
