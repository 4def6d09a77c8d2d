package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/report"
	"github.com/agentgate/agentgate/streams"
)

// reportContentTypes are the media types of the compliance report formats.
var reportContentTypes = map[string]string{
	"json": "application/json",
	"csv":  "text/csv; charset=utf-8",
	"pdf":  "application/pdf",
}

// getComplianceReport answers GET /agents/{id}/compliance-report?from&to&
// format=json|csv|pdf (seed 000 §7.3): the report built from the log (see
// handlers/report); json is the verifiable bundle. Auth as the other reads
// of an agent. The period is [from, to), at most MaxActivityPeriod, with
// the defaults of the activity query. The report is rendered into a
// temporary file before the status is sent, so a failure is an error
// answer, never a truncated body.
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
	hist, err := a.history(r.Context(), ag.ID)
	if err != nil {
		a.historyUnavailable(w, "the compliance report", err)
		return
	}
	defer hist.Release()
	tmp, err := os.CreateTemp("", "agentgate-report-")
	if err != nil {
		a.log.Error("creating report file", "err", err)
		e := failure(domain.CodeInternal, "the report could not be produced")
		writeJSON(w, e.status, e.body())
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	opts := report.Options{AgentID: ag.ID, From: period.from, To: period.to, Partition: hist.Partition}
	if err := a.renderReport(r.Context(), tmp, hist.Log, opts, format); err != nil {
		a.log.Error("producing compliance report", "agent", ag.ID, "err", err)
		e := failure(domain.CodeUnavailable, "the report could not be produced")
		writeJSON(w, e.status, e.body())
		return
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		a.log.Error("reading report file", "err", err)
		e := failure(domain.CodeInternal, "the report could not be produced")
		writeJSON(w, e.status, e.body())
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", fmt.Sprint(size))
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="compliance-%s-%s-%s.%s"`,
		ag.ID, period.from.Format("20060102"), period.to.Format("20060102"), format))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, tmp); err != nil {
		a.log.Warn("sending compliance report", "agent", ag.ID, "err", err)
	}
}

func (a *api) renderReport(ctx context.Context, w io.Writer, log streams.Log, opts report.Options, format string) error {
	if format == "json" {
		var jwks []byte
		if a.cfg.JWKS != nil {
			jwks = a.cfg.JWKS()
		}
		if len(jwks) == 0 {
			return errors.New("no JWKS to bundle")
		}
		_, err := report.WriteBundle(ctx, w, log, opts, jwks)
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
