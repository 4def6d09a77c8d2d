package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/report"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog/snapshot"
)

func init() { moreCommands = append(moreCommands, exportCmd) }

func exportCmd() *cobra.Command {
	var dataDir, agent, from, to, format, out string
	cmd := &cobra.Command{
		Use:   "export --data DIR --agent ID [--from T] [--to T] --format json|csv|pdf --out FILE",
		Short: "Write an agent's compliance report (QWED-Agent spec v1.1 §7.3) from the log: a verifiable JSON bundle, CSV or PDF",
		Long: `Write the compliance report of an agent over [--from, --to) from the event log: agent,
principal, period, the checkpoint it was produced at, summary figures, decisions and denial
rate per day, trust-level history, budget usage against limits, denied and pending actions
with their codes, attestations.

--format json writes a self-contained bundle: the report, the agent's own events up to the
report's position (as stored) each with its inclusion proof in the log's Merkle tree, the tree
head signed with the data dir's active key, the signed checkpoint the report names, and the JWKS.
No other agent's event is in it. Check it offline with 'agentgate audit verify --bundle FILE'. csv holds the same data as the report in the JSON,
one value per line; pdf renders it with charts. The same log gives the same bytes.

It reads a private copy of the log: the live log is never written, and the gate may keep running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			if agent == "" || out == "" {
				return errors.New("--agent and --out are required")
			}
			if format != "json" && format != "csv" && format != "pdf" {
				return fmt.Errorf("--format %q: want json, csv or pdf", format)
			}
			f, t, err := parsePeriod(from, to)
			if err != nil {
				return err
			}
			var jwks []byte
			var sign report.SignTree
			if format == "json" {
				if jwks, sign, err = dataDirSigner(dataDir); err != nil {
					return err
				}
			}
			snap, err := snapshot.Open(dataDir, quietLogger())
			if err != nil {
				return err
			}
			defer snap.Close()
			opts := report.Options{AgentID: agent, From: f, To: t}
			if from == "" {
				opts.From = time.Time{}
			}
			if to == "" {
				opts.To = time.Time{}
			}
			if opts, err = report.AgentDays(cmd.Context(), snap.Log, opts); err != nil {
				return err
			}
			var n int64
			err = writeAtomically(out, func(w io.Writer) error {
				cw := &countingWriter{w: w}
				err := writeReport(cmd, cw, snap.Log, opts, format, jwks, sign)
				n = cw.n
				return err
			})
			if err != nil || out == "-" {
				return err
			}
			// Said on stderr: stdout may be the report itself (--out -).
			fmt.Fprintf(os.Stderr, "wrote %s: the %s compliance report of agent %s, %s to %s (%s)\n", out, format, agent,
				opts.From.Format(time.DateOnly), opts.To.Format(time.DateOnly), plural(n, "byte"))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dataDir, "data", "./data", "data directory (read through a private copy of its log)")
	fl.StringVar(&agent, "agent", "", "the agent")
	fl.StringVar(&from, "from", "", "period start, RFC 3339 or YYYY-MM-DD (default: the UTC day the agent was registered)")
	fl.StringVar(&to, "to", "", "period end, exclusive (default: the end of the UTC day of the agent's last action)")
	fl.StringVar(&format, "format", "json", "json (verifiable bundle), csv or pdf")
	fl.StringVar(&out, "out", "", "output file (- for stdout)")
	return cmd
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func writeReport(cmd *cobra.Command, w io.Writer, log streams.Log, opts report.Options, format string, jwks []byte, sign report.SignTree) error {
	if format == "json" {
		_, err := report.WriteBundle(cmd.Context(), w, log, opts, jwks, sign)
		return err
	}
	rep, err := report.Build(cmd.Context(), log, opts, nil)
	if err != nil {
		return err
	}
	if format == "csv" {
		return report.WriteCSV(w, rep)
	}
	return report.WritePDF(w, rep)
}

// dataDirSigner reads the keyring and node ID of a data dir without ever
// creating a key: the JWKS and the signer of bundles' tree heads (the
// active key, as the gate's node).
func dataDirSigner(dataDir string) ([]byte, report.SignTree, error) {
	keys, err := filepath.Glob(filepath.Join(dataDir, "keys", "*.pem"))
	if err != nil || len(keys) == 0 {
		return nil, nil, fmt.Errorf("reading the signing keys of %s: no key in %s", dataDir, filepath.Join(dataDir, "keys"))
	}
	kr, err := attest.ReadKeyring(dataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the signing keys of %s: %w", dataDir, err)
	}
	nodeID, err := attest.ReadNodeID(dataDir)
	if err != nil {
		return nil, nil, err
	}
	return kr.JWKS(), func(c attest.TreeHeadClaims) (string, error) { return kr.SignTreeHead(nodeID, c) }, nil
}

// writeAtomically writes out through a temporary file renamed into place,
// so that a failed export leaves no partial file ("-" writes to stdout).
func writeAtomically(out string, write func(io.Writer) error) error {
	if out == "-" {
		return write(os.Stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return fmt.Errorf("creating output: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
