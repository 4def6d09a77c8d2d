package conformance

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the report: one line per vector (verdict, id, the
// sections it tests, then the reason if any), one line per level, and the level
// reached.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "QWED protocol v1.0 conformance of %s\n", r.URL)
	for _, o := range r.Outcomes {
		reason := ""
		if o.Reason != "" {
			reason = "  " + o.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\n", o.Verdict, o.ID, o.Section, reason)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	engines := "none"
	if len(r.Engines) > 0 {
		engines = strings.Join(r.Engines, ", ")
	}
	fmt.Fprintf(w, "\nengines answering the format vectors: %s\n", engines)
	for _, l := range r.Levels {
		state := "reached"
		if !l.Reached {
			state = "NOT reached"
		}
		fmt.Fprintf(w, "%-9s %-11s (%d passed, %d failed, %d skipped)\n", l.Level, state, l.Passed, l.Failed, l.Skipped)
	}
	_, err := fmt.Fprintf(w, "level reached: %s\n", r.Reached)
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
