// leadline console: behaviour that plain HTML and htmx attributes do not
// give. No inline scripts or handlers anywhere (the CSP allows none).
"use strict";
document.addEventListener("htmx:responseError", function (e) {
  // An error htmx did not swap (a failed connection, a 5xx): say so.
  var box = document.getElementById("htmx-error");
  if (box && !box.textContent.trim()) {
    box.textContent = "The server did not answer as expected (" + e.detail.xhr.status + "). Reload the page and try again.";
    box.className = "error";
  }
});
