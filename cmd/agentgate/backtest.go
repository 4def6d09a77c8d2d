package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentgate/agentgate/handlers/history/backtest"
	"github.com/agentgate/agentgate/streams/pebblelog/snapshot"
)

func init() { moreCommands = append(moreCommands, backtestCmd) }

// Open period bounds: no --from is the start of the log, no --to its end.
var (
	periodStart = time.Unix(0, 0).UTC()
	periodEnd   = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// parsePeriod reads --from and --to (RFC 3339 or YYYY-MM-DD, UTC midnight);
// the period is [from, to).
func parsePeriod(from, to string) (time.Time, time.Time, error) {
	f, t := periodStart, periodEnd
	var err error
	if from != "" {
		if f, err = parseWhen("--from", from); err != nil {
			return f, t, err
		}
	}
	if to != "" {
		if t, err = parseWhen("--to", to); err != nil {
			return f, t, err
		}
	}
	if !f.Before(t) {
		return f, t, errors.New("--from must be before --to")
	}
	return f, t, nil
}

func parseWhen(flag, s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time or a YYYY-MM-DD date", flag, s)
}

func backtestCmd() *cobra.Command {
	var (
		dataDir, agent, principal, from, to, changesFile, policyFile string
		sets                                                         []string
		asJSON                                                       bool
		maxRows                                                      int
	)
	cmd := &cobra.Command{
		Use:   "backtest --data DIR (--agent ID | --principal ID) [--from T] [--to T] (--set KEY=VALUE … | --changes FILE.json | --policy-file FILE.json) [--json]",
		Short: "Re-decide the recorded commands under changed settings and report what would have changed",
		Long: `Re-decide the recorded commands of an agent (or of every agent of a principal) in
[--from, --to) under changed settings, carrying the changed state forward (a denial
frees budget for later requests, a lower trust level turns approvals into pendings),
and report decision by decision what would have changed, with totals.

It reads a private copy of the log: the live log is never written, and the gate may
keep running. Changes apply at --from (or at the registration of an agent registered
later); recorded commands that change a setting later in the period still apply.

Consumer policies (the Agent Policy Engine): --policy-file FILE holds
{"put": [policy, …], "delete": ["id", …]}, each policy as POST /policies takes it; at
--from they replace (or add, or delete) the policies of the consumer of the selected
agents, and every recorded execute is re-decided under them: the rows list the
executes whose status would change (executing -> blocked, …). A recommendation of
GET /transactions/analytics is checked this way.

Settable keys (--set KEY=VALUE, repeatable, or one JSON object of KEY: VALUE in
--changes FILE):
` + backtest.KeysHelp(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			if (agent == "") == (principal == "") {
				return errors.New("give exactly one of --agent and --principal")
			}
			f, t, err := parsePeriod(from, to)
			if err != nil {
				return err
			}
			var ch backtest.Changes
			if changesFile != "" {
				b, err := os.ReadFile(changesFile)
				if err != nil {
					return fmt.Errorf("reading changes: %w", err)
				}
				if err := ch.ParseJSON(b); err != nil {
					return fmt.Errorf("%s: %w", changesFile, err)
				}
			}
			if err := ch.ParseSet(sets); err != nil {
				return err
			}
			var pc backtest.PolicyChanges
			if policyFile != "" {
				b, err := os.ReadFile(policyFile)
				if err != nil {
					return fmt.Errorf("reading policy changes: %w", err)
				}
				if pc, err = backtest.ParsePolicyChanges(b); err != nil {
					return fmt.Errorf("%s: %w", policyFile, err)
				}
			}
			snap, err := snapshot.Open(dataDir, quietLogger())
			if err != nil {
				return err
			}
			defer snap.Close()
			res, err := backtest.Run(cmd.Context(), snap.Log, backtest.Options{
				AgentID: agent, PrincipalID: principal, From: f, To: t, Changes: ch, Policies: pc, MaxRows: maxRows,
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(res)
			}
			return res.WriteTable(os.Stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dataDir, "data", "./data", "data directory (read through a private copy of its log)")
	fl.StringVar(&agent, "agent", "", "the agent to backtest")
	fl.StringVar(&principal, "principal", "", "backtest every agent of this principal")
	fl.StringVar(&from, "from", "", "period start, RFC 3339 or YYYY-MM-DD (default: the start of the log)")
	fl.StringVar(&to, "to", "", "period end, exclusive (default: the end of the log)")
	fl.StringArrayVar(&sets, "set", nil, "a changed setting KEY=VALUE (repeatable; keys below)")
	fl.StringVar(&changesFile, "changes", "", "a JSON file of changed settings {\"KEY\": VALUE, …}")
	fl.StringVar(&policyFile, "policy-file", "", "a JSON file of changed consumer policies {\"put\": [policy, …], \"delete\": [id, …]}")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.IntVar(&maxRows, "max-rows", backtest.DefaultMaxRows, "list at most this many changed decisions (the totals count all)")
	return cmd
}

// quietLogger logs warnings and errors only: the offline readers print
// their results on stdout and keep stderr for trouble.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
