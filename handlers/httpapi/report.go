package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/streams"
)

// DefaultMaxConcurrentReports is Config.MaxConcurrentReports's default:
// a report reads the agent's partition of the log from its start (CPU
// and I/O bound), so a few at once are enough to keep a core busy
// without starving decisions.
const DefaultMaxConcurrentReports = 2

// reportContentTypes are the media types of the compliance report formats.
var reportContentTypes = map[string]string{
	"json": "application/json",
	"csv":  "text/csv; charset=utf-8",
	"pdf":  "application/pdf",
}

// getComplianceReport answers GET /agents/{id}/compliance-report?from&to&
// format=json|csv|pdf (QWED-Agent spec v1.1 §7.3): the report built from the log (see
// handlers/history/report); json is the verifiable, tenant-scoped bundle. Auth as
// the other reads of an agent. The period is [from, to), at most
// MaxActivityPeriod; without from and to it is the agent's days
// (report.AgentDays), with one of them the other defaults as the activity
// query's. At most
// Config.MaxConcurrentReports are rendered at once, and the agents of one
// principal hold all of them but one (503 QWED-SYS-002 with Retry-After
// past either). The report is computed before the status is sent
// (a failure is an error answer, never a truncated body) and then
// streamed: nothing is staged on disk, and what is held in memory is the
// report and, for a bundle, the agent's events with their proofs.
func (a *api) getComplianceReport(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	ag, e := a.readAgentFor(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	q := r.URL.Query()
	period, e := parseActivityQuery(q, a.cfg.Clock())
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	ctype, ok := reportContentTypes[format]
	if !ok {
		a.fail(r.Context(), w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "format", "expected": "json, csv or pdf"},
			"format must be json, csv or pdf"))
		return
	}
	if e := a.startRender(ag.Info.PrincipalID); e != nil {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, e.status, e.body())
		return
	}
	defer a.endRender(ag.Info.PrincipalID)
	hist, err := a.history(r.Context(), ag.ID)
	if err != nil {
		a.historyUnavailable(w, "the compliance report", err)
		return
	}
	defer hist.Release()
	opts := report.Options{AgentID: ag.ID, From: period.from, To: period.to, Partition: hist.Partition}
	if q.Get("from") == "" && q.Get("to") == "" {
		// The default period is the agent's days, as agentgate export's
		// (at most MaxActivityPeriod, ending with its last day).
		opts.From, opts.To = time.Time{}, time.Time{}
		if opts, err = report.AgentDays(r.Context(), hist.Log, opts); err != nil {
			a.log.Error("producing compliance report", "agent", ag.ID, "err", err)
			e := failure(domain.CodeUnavailable, "the report could not be produced")
			writeJSON(w, e.status, e.body())
			return
		}
		if opts.To.Sub(opts.From) > MaxActivityPeriod {
			opts.From = opts.To.Add(-MaxActivityPeriod)
		}
		period.from, period.to = opts.From, opts.To
	}
	out := &reportWriter{w: w, start: func(h http.Header) {
		h.Set("Content-Type", ctype)
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="compliance-%s-%s-%s.%s"`,
			ag.ID, period.from.Format("20060102"), period.to.Format("20060102"), format))
	}}
	if err := a.renderReport(r.Context(), out, hist.Log, opts, format); err != nil {
		if out.started {
			a.log.Warn("sending compliance report", "agent", ag.ID, "err", err)
			return
		}
		a.log.Error("producing compliance report", "agent", ag.ID, "err", err)
		e := failure(domain.CodeUnavailable, "the report could not be produced")
		writeJSON(w, e.status, e.body())
	}
}

// reportShare is how many of the report slots one tenant may hold: all
// but one (at least one), so one tenant's reports never take every slot.
func (a *api) reportShare() int { return max(1, cap(a.reports)-1) }

// startRender takes a report slot for a report of tenant's agent, or
// refuses with 503 QWED-SYS-002 when every slot is taken, or when the
// tenant holds its share of them already.
func (a *api) startRender(tenant string) *apiError {
	a.renderMu.Lock()
	defer a.renderMu.Unlock()
	if a.rendering[tenant] >= a.reportShare() {
		e := failure(domain.CodeUnavailable, "%d compliance reports of this principal's agents are being produced, the most at once: retry shortly", a.reportShare())
		e.err.Details = map[string]any{"limit": "concurrent_reports_per_principal", "max": a.reportShare()}
		return e
	}
	select {
	case a.reports <- struct{}{}:
	default:
		e := failure(domain.CodeUnavailable, "%d compliance reports are being produced, the most at once: retry shortly", cap(a.reports))
		e.err.Details = map[string]any{"limit": "concurrent_reports", "max": cap(a.reports)}
		return e
	}
	if a.rendering == nil {
		a.rendering = map[string]int{}
	}
	a.rendering[tenant]++
	return nil
}

// endRender gives back the slot startRender took.
func (a *api) endRender(tenant string) {
	a.renderMu.Lock()
	defer a.renderMu.Unlock()
	if a.rendering[tenant]--; a.rendering[tenant] <= 0 {
		delete(a.rendering, tenant)
	}
	<-a.reports
}

// reportWriter sends the headers and the status with the first byte.
type reportWriter struct {
	w       http.ResponseWriter
	start   func(http.Header)
	started bool
}

func (rw *reportWriter) Write(p []byte) (int, error) {
	if !rw.started {
		rw.started = true
		rw.start(rw.w.Header())
		rw.w.WriteHeader(http.StatusOK)
	}
	return rw.w.Write(p)
}

// renderReport writes the report of opts to w, computing all of it before
// the first byte.
func (a *api) renderReport(ctx context.Context, w io.Writer, log streams.Log, opts report.Options, format string) error {
	if format == "json" {
		var jwks []byte
		if a.cfg.JWKS != nil {
			jwks = a.cfg.JWKS()
		}
		if len(jwks) == 0 || a.cfg.SignTreeHead == nil {
			return errors.New("no JWKS or tree head signer to bundle with")
		}
		_, err := report.WriteBundle(ctx, w, log, opts, jwks, a.cfg.SignTreeHead)
		return err
	}
	rep, err := report.Build(ctx, log, opts, nil)
	if err != nil {
		return err
	}
	if format == "csv" {
		return report.WriteCSV(w, rep)
	}
	return report.WritePDF(w, rep)
}
