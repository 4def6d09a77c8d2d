package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/spf13/cobra"

	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/pebblelog/snapshot"
)

func init() { moreCommands = append(moreCommands, auditCmd) }

// auditBundle, when set (by the file that defines bundles), verifies
// `audit verify --bundle FILE`: it prints its findings and returns
// exitCode(1) on a break.
var auditBundle func(ctx context.Context, file, jwks string, opts audit.Options, asJSON bool) error

// auditFlags are the flags of audit verify.
type auditFlags struct {
	dataDir, brokers, topic, jwks, bundle string
	noSignatures, asJSON                  bool
	timeout                               time.Duration
}

func auditCmd() *cobra.Command {
	root := &cobra.Command{Use: "audit", Short: "Check that the event log is the unbroken, signed chain the gate wrote"}
	var f auditFlags
	verify := &cobra.Command{
		Use:   "verify (--data DIR | --kafka-brokers HOST:PORT --topic TOPIC | --bundle FILE)",
		Short: "Walk the chain: seq without gaps, prev hashes, checkpoint signatures, attestations; exit 1 at the first broken link",
		Long: `Walk the event log and check every link: seq gap-free, prev = SHA-256 of the previous event's
stored bytes, every checkpoint's signature and head, every attestation, the checkpoint cadence and,
for --data, the head the projections recorded. Exit 0 when the chain is intact, 1 with the first
broken link (partition, seq, offset, expected, found). With --data the log is read from a private
copy, so the gate may keep running (the projections' head is then not checked: the gate holds them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			return runAudit(cmd.Context(), f)
		},
	}
	fl := verify.Flags()
	fl.StringVar(&f.dataDir, "data", "", "data directory of an embedded gate (its log/, state/ and keys/)")
	fl.StringVar(&f.brokers, "kafka-brokers", "", "Kafka brokers HOST:PORT[,...] of the events topic (all partitions)")
	fl.StringVar(&f.topic, "topic", "agentgate.events", "events topic (with --kafka-brokers)")
	fl.StringVar(&f.bundle, "bundle", "", "a compliance export bundle to check offline")
	fl.StringVar(&f.jwks, "jwks", "", jwksHelp+" (default with --data: DIR/keys)")
	fl.BoolVar(&f.noSignatures, "no-signatures", false, "check the hash chain and checkpoint cadence only, no signature")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fl.DurationVar(&f.timeout, "kafka-timeout", 30*time.Second, "timeout of each Kafka request")
	root.AddCommand(verify)
	return root
}

func runAudit(ctx context.Context, f auditFlags) error {
	modes := 0
	for _, s := range []string{f.dataDir, f.brokers, f.bundle} {
		if s != "" {
			modes++
		}
	}
	if modes != 1 && !(f.brokers != "" && f.dataDir != "" && modes == 2) {
		return errors.New("give one of --data DIR, --kafka-brokers HOST:PORT or --bundle FILE")
	}
	opts := audit.Options{SkipSignatures: f.noSignatures}
	if f.bundle != "" {
		if auditBundle == nil {
			return errors.New("--bundle: this build cannot read bundles")
		}
		return auditBundle(ctx, f.bundle, f.jwks, opts, f.asJSON)
	}
	jwks, err := auditJWKS(ctx, f)
	if err != nil {
		return err
	}
	var src audit.Source
	if f.brokers != "" {
		opts.Superseded = true
		var brokers []string
		for _, b := range strings.Split(f.brokers, ",") {
			if b = strings.TrimSpace(b); b != "" {
				brokers = append(brokers, b)
			}
		}
		src = audit.StoredSource(kafkalog.StoredTopic(&kafka.Client{Addr: kafka.TCP(brokers...), Timeout: f.timeout}, f.topic))
	} else {
		snap, heads, err := openAuditedLog(f.dataDir)
		var chainErr *streams.ChainError
		if errors.As(err, &chainErr) {
			// The log refuses to open on a broken last record.
			return printAudit(&audit.Report{Break: &audit.Break{Seq: chainErr.Seq, Offset: -1, Kind: audit.KindMalformed,
				Detail: "the log refuses to open: " + chainErr.Reason}}, f.asJSON)
		}
		if err != nil {
			return err
		}
		defer snap.Close()
		opts.Heads = heads
		src = audit.LogSource(snap.Log, 0)
	}
	rep, err := audit.Verify(ctx, src, jwks, opts)
	if err != nil {
		return err
	}
	return printAudit(rep, f.asJSON)
}

// auditJWKS returns the signing keys to check against: --jwks, else the
// data dir's keyring (nil with --no-signatures).
func auditJWKS(ctx context.Context, f auditFlags) ([]byte, error) {
	if f.noSignatures {
		return nil, nil
	}
	if f.jwks != "" {
		return loadJWKS(ctx, f.jwks)
	}
	if f.dataDir == "" {
		return nil, errors.New("--jwks is required (or --no-signatures): the signing keys to check checkpoints and attestations against")
	}
	if _, err := os.Stat(filepath.Join(f.dataDir, "keys")); err != nil {
		return nil, fmt.Errorf("reading the signing keys of %s (give --jwks): %w", f.dataDir, err)
	}
	kr, err := attest.ReadKeyring(f.dataDir)
	if err != nil {
		return nil, fmt.Errorf("opening signing keys: %w", err)
	}
	return kr.JWKS(), nil
}

// openAuditedLog opens a private copy of the embedded log of dir
// (streams/pebblelog/snapshot: the gate may keep running) and returns it with the
// head the projections recorded. The projections are read first, so the
// copy is at least as recent; when they cannot be read (no state/, or the
// running gate holds its lock) the recorded head is not checked and a
// note says so on stderr.
func openAuditedLog(dir string) (*snapshot.Snapshot, []audit.Head, error) {
	if _, err := os.Stat(filepath.Join(dir, snapshot.LogDir)); err != nil {
		return nil, nil, fmt.Errorf("opening the log of %s: %w", dir, err)
	}
	var heads []audit.Head
	stateDir := filepath.Join(dir, "state")
	switch _, err := os.Stat(stateDir); {
	case err == nil:
		h, err := projectionsHead(stateDir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "note: the projections' recorded head is not checked: %v\n", err)
		} else if h != nil {
			heads = append(heads, *h)
		}
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintln(os.Stderr, "note: no projections (state/): no recorded head to check the tail against")
	default:
		return nil, nil, fmt.Errorf("opening the projections: %w", err)
	}
	snap, err := snapshot.Open(dir, auditLogger())
	if err != nil {
		return nil, nil, err
	}
	return snap, heads, nil
}

// projectionsHead reads the projections' checkpoint (nil when empty).
func projectionsHead(stateDir string) (*audit.Head, error) {
	st, err := projections.Open(stateDir, auditLogger())
	if err != nil {
		return nil, err
	}
	ck, err := st.Checkpoint()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("reading the projections' checkpoint: %w", err)
	}
	if ck.Seq == 0 {
		return nil, nil
	}
	return &audit.Head{Partition: 0, Seq: ck.Seq, Hash: ck.Hash, Source: "the projections (state/)"}, nil
}

// printAudit prints the report; a break is exitCode(1).
func printAudit(rep *audit.Report, asJSON bool) error {
	if asJSON {
		if err := printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Partitions {
			fmt.Printf("partition %d: seq %d..%d (%s), %s", p.Partition, p.FirstSeq, p.LastSeq, plural(p.Events, "event"), plural(p.Checkpoints, "checkpoint"))
			if p.LastCheckpoint > 0 {
				fmt.Printf(" (last at seq %d, %s after it)", p.LastCheckpoint, plural(p.Uncovered, "event"))
			}
			fmt.Printf(", %s verified", plural(p.Attestations, "attestation"))
			if p.Superseded > 0 {
				fmt.Printf(", %s skipped", plural(p.Superseded, "superseded record"))
			}
			fmt.Println()
		}
		if b := rep.Break; b != nil {
			fmt.Println("BROKEN:", b.Error())
		} else {
			fmt.Println("INTACT")
		}
	}
	if !rep.OK() {
		return exitCode(1)
	}
	return nil
}

// auditLogger logs only errors, on stderr: the report is the output.
func auditLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}
