package backtest

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable renders the result as text: the changes, one line per changed
// decision, the transitions and the totals.
func (r *Result) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	subject := "agent " + r.AgentID
	if r.PrincipalID != "" {
		subject = fmt.Sprintf("principal %s (%s)", r.PrincipalID, plural(len(r.Agents), "agent"))
	}
	ew.printf("backtest of %s, %s to %s (log read to seq %d)\n", subject,
		r.Period.From.Format(time.RFC3339), r.Period.To.Format(time.RFC3339), r.LogHead)
	if len(r.Changes) == 0 {
		ew.printf("changes: none (the recorded decisions are re-decided as they were)\n")
	} else {
		parts := make([]string, len(r.Changes))
		for i, s := range r.Changes {
			parts[i] = s.Key + "=" + s.Value
		}
		ew.printf("changes: %s\n", strings.Join(parts, " "))
	}
	if pc := r.PolicyChanges; pc != nil {
		var parts []string
		for _, p := range pc.Put {
			parts = append(parts, "put "+p.ID+" ("+string(p.Type)+")")
		}
		for _, id := range pc.Delete {
			parts = append(parts, "delete "+id)
		}
		ew.printf("policy changes: %s\n", strings.Join(parts, ", "))
	}
	ew.printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tAGENT\tACTION\tRECORDED\tBACKTEST\tWHY")
	for _, row := range r.Decisions {
		action := row.Action
		if action == "" {
			action = string(row.Command)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Seq, row.Time.Format(time.RFC3339), row.AgentID, action, row.Recorded, row.Backtest, row.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Truncated {
		ew.printf("… %s more not listed\n", plural(r.Totals.Changed-int64(len(r.Decisions)), "changed decision"))
	}
	t := r.Totals
	ew.printf("\nre-decided %s (%s): %d changed\n", plural(t.Redecided, "command"), plural(t.Decisions, "decision"), t.Changed)
	if t.Executes > 0 {
		ew.printf("executes: %d; recorded %s; backtest %s\n", t.Executes, statusCounts(t.RecordedExecutes), statusCounts(t.BacktestExecutes))
	}
	for _, tr := range t.Transitions {
		ew.printf("  %-40s -> %-40s %d\n", tr.From, tr.To, tr.Count)
	}
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tAPPROVED\tDENIED\tCORRECTED\tPENDING\tBUDGET_EXCEEDED\tREJECTED\tRESERVED_USD\tRESERVED_TOKENS\t")
	for _, c := range []struct {
		name string
		c    Counts
	}{{"recorded", t.Recorded}, {"backtest", t.Backtest}} {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t\n", c.name, c.c.Approved, c.c.Denied, c.c.Corrected,
			c.c.Pending, c.c.BudgetExceeded, c.c.Rejected, c.c.ReservedUSD, c.c.ReservedTokens)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return ew.err
}

// plural is "1 agent", "2 agents": n and the noun, with an s unless n is 1.
func plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// statusCounts renders counts by status, sorted by status.
func statusCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
