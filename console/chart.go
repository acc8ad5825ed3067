package console

import "encoding/json"

// Chart is a chart a page draws with the vendored Chart.js: a <canvas
// data-chart="{{.JSON}}"> in a page whose page.Charts is set; app.js
// draws every such canvas when the page loads and after each htmx swap.
// Show the numbers in a table beside it too: the canvas is a picture.
type Chart struct {
	// Type is Chart.js's: "line" or "bar".
	Type     string        `json:"type"`
	Labels   []string      `json:"labels"`
	Datasets []ChartSeries `json:"datasets"`
	// Horizontal lays bars along the x axis (a funnel).
	Horizontal bool `json:"horizontal,omitempty"`
}

// ChartSeries is one series of a chart.
type ChartSeries struct {
	Label string    `json:"label"`
	Data  []float64 `json:"data"`
}

// JSON is the chart as its canvas's data-chart attribute holds it.
func (c Chart) JSON() string {
	if c.Labels == nil {
		c.Labels = []string{}
	}
	if c.Datasets == nil {
		c.Datasets = []ChartSeries{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // strings and numbers always marshal
	}
	return string(b)
}
