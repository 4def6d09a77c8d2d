package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentgate/agentgate/domain"
)

// metrics are the API's Prometheus collectors.
type metrics struct {
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	handler   http.Handler
}

// newMetrics registers the collectors on reg (reusing collectors a previous
// New registered there).
func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentgate_http_requests_total",
			Help: "HTTP requests answered, by route pattern and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentgate_http_request_duration_seconds",
			Help:    "Time from reading the request to writing the answer, by route pattern.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 12),
		}, []string{"route"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentgate_decisions_total",
			Help: "Verification decisions answered (actions and tool calls), by decision.",
		}, []string{"decision"}),
	}
	m.requests = register(reg, m.requests)
	m.latency = register(reg, m.latency)
	m.decisions = register(reg, m.decisions)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	return m
}

// register registers c on reg, or returns the equal collector already there.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("httpapi: registering metrics: " + err.Error())
	}
	return c
}

// decision counts an answered decision.
func (m *metrics) decision(ev *domain.Event) {
	if ev.Type == domain.EvActionDecided && ev.Decided != nil {
		m.decisions.WithLabelValues(string(ev.Decided.Decision)).Inc()
	}
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// instrument counts and times every request of one route.
func (m *metrics) instrument(route string, h http.HandlerFunc) http.HandlerFunc {
	latency := m.latency.WithLabelValues(route)
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		latency.Observe(time.Since(start).Seconds())
		m.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
	}
}
