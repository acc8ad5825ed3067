package platform

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leadline/leadline/engine"
)

// Metrics is the platform's Prometheus registry and the counters the
// server, the runner and the webhook worker report to. It is the
// platform's own registry, not the process's default one, so that tests
// and programs that embed leadline stay apart. The areas know no metrics
// library: the runner and the webhook worker are given Metrics as their
// Observer, and the server calls Request and RateLimited.
type Metrics struct {
	Registry *prometheus.Registry

	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	refusals   *prometheus.CounterVec
	steps      *prometheus.CounterVec
	transport  *prometheus.CounterVec
	inbound    *prometheus.CounterVec
	unmatched  prometheus.Counter
	deliveries *prometheus.CounterVec
	failures   prometheus.Counter
}

// newMetrics registers leadline's metrics, the Go runtime's and the
// process's on a registry of their own; p's database gives the gauges
// read at each scrape.
func newMetrics(p *Platform) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadline_http_requests_total",
			Help: "API requests answered, by operation (the OpenAPI operation id, or the route) and status."}, []string{"operation", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "leadline_http_request_duration_seconds",
			Help:    "Time to answer an API request, by operation and status.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"operation", "status"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadline_rate_limit_refusals_total",
			Help: "Calls refused with 429 because a key's hourly budget was spent, by rate class."}, []string{"class"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadline_runner_steps_total",
			Help: "Sequence actions the runner performed, by action and outcome (sent, failed_transient, failed_permanent, failed_sender, not_performed, unknown)."},
			[]string{"action", "outcome"}),
		transport: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadline_transport_errors_total",
			Help: "Transport failures, by transport and kind (transient, permanent, sender, unknown, inbound)."}, []string{"transport", "kind"}),
		inbound: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadline_inbound_messages_total",
			Help: "Reports of what happened outside that the runner took in, by source and kind."}, []string{"source", "kind"}),
		unmatched: prometheus.NewCounter(prometheus.CounterOpts{Name: "leadline_inbound_unmatched_total",
			Help: "Inbound mail that matched no lead and was left alone."}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadline_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by result (succeeded, failed)."}, []string{"result"}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "leadline_webhook_failures_total",
			Help: "Webhook deliveries that failed for good (after the last attempt, or for a webhook switched off)."}),
	}
	reg.MustRegister(m.requests, m.latency, m.refusals, m.steps, m.transport, m.inbound, m.unmatched, m.deliveries, m.failures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), backlog{p})
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Request counts one API request: its operation, status and duration.
func (m *Metrics) Request(operation string, status int, d time.Duration) {
	s := strconv.Itoa(status)
	m.requests.WithLabelValues(operation, s).Inc()
	m.latency.WithLabelValues(operation, s).Observe(d.Seconds())
}

// RateLimited counts one call refused because class's budget was spent.
func (m *Metrics) RateLimited(class string) { m.refusals.WithLabelValues(class).Inc() }

// Step is the runner's engine.Observer.
func (m *Metrics) Step(action, outcome string) { m.steps.WithLabelValues(action, outcome).Inc() }

// TransportError is the runner's engine.Observer.
func (m *Metrics) TransportError(transport, kind string) {
	m.transport.WithLabelValues(transport, kind).Inc()
}

// Inbound is the runner's engine.Observer.
func (m *Metrics) Inbound(source, kind string) { m.inbound.WithLabelValues(source, kind).Inc() }

// Unmatched is the runner's engine.Observer.
func (m *Metrics) Unmatched() { m.unmatched.Inc() }

// Attempt is the webhook worker's webhooks.Observer.
func (m *Metrics) Attempt(ok, final bool) {
	result := "succeeded"
	if !ok {
		result = "failed"
	}
	m.deliveries.WithLabelValues(result).Inc()
	if final {
		m.failures.Inc()
	}
}

var _ engine.Observer = (*Metrics)(nil)

// backlog reads the gauges of the shared database at each scrape: every
// replica reports the same values (take max, not sum, across replicas).
type backlog struct{ p *Platform }

var (
	lagDesc = prometheus.NewDesc("leadline_runner_due_lag_seconds",
		"How long the oldest due enrollment that no runner holds has waited.", nil, nil)
	leasesDesc = prometheus.NewDesc("leadline_runner_leases_held",
		"Enrollments a runner holds a lease on now.", nil, nil)
	inboundDesc = prometheus.NewDesc("leadline_inbound_queue_depth",
		"Pushed events waiting in the inbound queue.", nil, nil)
	webhookDesc = prometheus.NewDesc("leadline_webhook_queue_depth",
		"Webhook deliveries waiting to be sent.", nil, nil)
	scrapeDesc = prometheus.NewDesc("leadline_metrics_database_up",
		"1 when the gauges read from the database at this scrape, 0 when the database did not answer.", nil, nil)
)

func (backlog) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{lagDesc, leasesDesc, inboundDesc, webhookDesc, scrapeDesc} {
		ch <- d
	}
}

func (b backlog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	up := 0.0
	bl, err := engine.ReadBacklog(ctx, b.p.DB, true, b.p.Clock.Now())
	if err == nil {
		var depth int
		if depth, err = b.p.Webhooks.QueueDepth(ctx); err == nil {
			up = 1
			ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, bl.Lag.Seconds())
			ch <- prometheus.MustNewConstMetric(leasesDesc, prometheus.GaugeValue, float64(bl.Leases))
			ch <- prometheus.MustNewConstMetric(inboundDesc, prometheus.GaugeValue, float64(bl.Inbound))
			ch <- prometheus.MustNewConstMetric(webhookDesc, prometheus.GaugeValue, float64(depth))
		}
	}
	if err != nil {
		b.p.Logger.Warn("metrics: cannot read the backlog", "error", err)
	}
	ch <- prometheus.MustNewConstMetric(scrapeDesc, prometheus.GaugeValue, up)
}
