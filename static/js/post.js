// Posting through JoyBack: the chosen video is shown before it is posted, and one longer than the
// creator's TikTok account allows is refused at once, before a byte of it is uploaded. The length
// measured here goes with the form for a WebM, whose length the server cannot read.
(function () {
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[data-post-video]")) return;
    var form = input.form;
    var preview = form.querySelector("[data-video-preview]");
    var error = form.querySelector("[data-video-error]");
    var duration = form.querySelector("[data-video-duration]");
    var button = form.querySelector("button[type=submit]");
    var max = parseInt(input.dataset.maxSeconds || "0", 10);
    error.hidden = true;
    error.textContent = "";
    duration.value = "";
    button.disabled = false;
    input.removeAttribute("aria-invalid");
    if (preview.src) URL.revokeObjectURL(preview.src);
    var file = input.files && input.files[0];
    if (!file) {
      preview.hidden = true;
      preview.removeAttribute("src");
      return;
    }
    preview.onloadedmetadata = function () {
      if (!isFinite(preview.duration)) return;
      duration.value = preview.duration.toFixed(2);
      if (max && preview.duration > max) {
        error.textContent = error.dataset.tooLong;
        error.hidden = false;
        input.setAttribute("aria-invalid", "true");
        button.disabled = true;
        input.focus();
      }
    };
    preview.src = URL.createObjectURL(file);
    preview.hidden = false;
  });
})();
