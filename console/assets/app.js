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

// Charts: every <canvas data-chart="{type, labels, datasets}"> (console/chart.go)
// is drawn with the vendored Chart.js, which pages with charts load.
var palette = ["#1f5fbf", "#2e8b57", "#c77c02", "#a3261b", "#6a4c93", "#1b998b"];
function drawCharts(root) {
  if (!window.Chart || !root.querySelectorAll) {
    return;
  }
  root.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
    if (canvas.dataset.drawn) {
      return;
    }
    canvas.dataset.drawn = "1";
    var spec = JSON.parse(canvas.dataset.chart);
    spec.datasets.forEach(function (d, i) {
      d.borderColor = palette[i % palette.length];
      d.backgroundColor = palette[i % palette.length];
    });
    new window.Chart(canvas, {
      type: spec.type,
      data: { labels: spec.labels, datasets: spec.datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        indexAxis: spec.horizontal ? "y" : "x",
        scales: { y: { beginAtZero: true } }
      }
    });
  });
}
document.addEventListener("DOMContentLoaded", function () { drawCharts(document); });
document.addEventListener("htmx:afterSettle", function (e) { drawCharts(e.target); });
