package handlers

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/agentgate/agentgate/domain"
)

// Metrics are the worker's Prometheus metrics.
type Metrics struct {
	events     *prometheus.CounterVec
	batchSize  prometheus.Histogram
	appendSecs prometheus.Histogram
}

// NewMetrics registers the worker metrics (and the Go and process
// collectors) on reg.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	m := &Metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentgate_events_total", Help: "Events committed to the log, by type and decision.",
		}, []string{"type", "decision"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agentgate_batch_events", Help: "Events per committed batch.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 7),
		}),
		appendSecs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agentgate_append_seconds", Help: "Time to append a batch durably to the log.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
		}),
	}
	reg.MustRegister(m.events, m.batchSize, m.appendSecs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// OnBatch observes one committed batch; pass it as WorkerConfig.OnBatch.
func (m *Metrics) OnBatch(events []*domain.Event, appendDur time.Duration) {
	m.batchSize.Observe(float64(len(events)))
	m.appendSecs.Observe(appendDur.Seconds())
	for _, ev := range events {
		decision := ""
		if ev.Decided != nil {
			decision = string(ev.Decided.Decision)
		}
		m.events.WithLabelValues(string(ev.Type), decision).Inc()
	}
}
