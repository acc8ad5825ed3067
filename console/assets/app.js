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

// Charts: a <canvas class="chart"> carries its kind (data-kind), labels
// (data-labels) and datasets (data-datasets) as JSON; the page loads the
// vendored Chart.js, and the same numbers stand in the table beside it.
function drawCharts(root) {
  if (typeof Chart === "undefined") {
    return;
  }
  root.querySelectorAll("canvas.chart").forEach(function (c) {
    if (c.dataset.drawn) {
      return;
    }
    c.dataset.drawn = "1";
    var sets = JSON.parse(c.dataset.datasets || "[]");
    new Chart(c, {
      type: c.dataset.kind || "line",
      data: { labels: JSON.parse(c.dataset.labels || "[]"), datasets: sets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        plugins: { legend: { display: sets.length > 1 } },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } }
      }
    });
  });
}
document.addEventListener("DOMContentLoaded", function () { drawCharts(document); });
document.addEventListener("htmx:afterSwap", function (e) { drawCharts(e.target); });

// Polled blocks (data-poll: the inbox's list and a thread's messages) are
// not asked for while the page is hidden: a tab left in the background
// neither loads the server nor keeps its session alive.
document.addEventListener("htmx:beforeRequest", function (e) {
  if (document.hidden && e.detail.elt && e.detail.elt.hasAttribute("data-poll")) {
    e.preventDefault();
  }
});
