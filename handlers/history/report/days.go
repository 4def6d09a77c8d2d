package report

import (
	"context"
	"errors"
	"time"

	"github.com/agentgate/agentgate/streams"
)

// AgentDays returns opts with its zero bounds set to the agent's days:
// From to the UTC day of its registration, To to the end of the UTC day
// of its last action (of its registration day when it has none). It is
// the default period of a report (agentgate export, GET
// /agents/{id}/compliance-report): real dates, the same for the same log.
// It reads the agent's events once.
func AgentDays(ctx context.Context, log streams.Log, opts Options) (Options, error) {
	open := opts
	open.From, open.To = time.Unix(0, 0).UTC(), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	rep, err := Build(ctx, log, open, nil)
	if err != nil {
		return opts, err
	}
	day := func(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }
	registered := day(rep.Agent.RegisteredAt)
	if opts.From.IsZero() {
		opts.From = registered
	}
	if opts.To.IsZero() {
		last := registered
		if n := len(rep.Days); n > 0 {
			if d, err := time.Parse(time.DateOnly, rep.Days[n-1].Date); err == nil && d.After(last) {
				last = d
			}
		}
		opts.To = last.Add(24 * time.Hour)
	}
	if !opts.From.Before(opts.To) {
		return opts, errors.New("building report: the period starts after the agent's last day")
	}
	return opts, nil
}
