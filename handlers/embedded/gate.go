package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// Options configure an embedded gate.
type Options struct {
	// DataDir holds the log, the projections, the signing keys and the
	// admin key hash.
	DataDir string
	// AdminKey, when set, is the admin API key; otherwise the key whose
	// hash is in the data dir is used, and on first start one is minted
	// and returned once in Gate.NewAdminKey.
	AdminKey string
	// Config is the decision configuration (nil: keep what the log says).
	Config *domain.Config
	Clock  func() time.Time
	Logger *slog.Logger
	// OnBatch observes committed batches (metrics).
	OnBatch func(events []*domain.Event, appendDur time.Duration)
	// Verifier runs the engines on verify_action commands and on A2A
	// code and logic messages (nil: the rules and guards alone decide).
	Verifier handlers.ActionVerifier
	// Checkpoint is the log checkpoint policy (zero: every 1,000 events
	// or 10 s).
	Checkpoint domain.CheckpointPolicy
	// AttestationTTL is how long an attestation is valid after it is
	// issued, its exp claim (0: no exp; serve's default is
	// attest.DefaultAttestationTTL).
	AttestationTTL time.Duration
	// MinFreeBytes is the free space the log and the projections each keep
	// on their disk (zero: their defaults; negative: no check); below it
	// writes are refused with streams.ErrNoSpace (streams/diskspace).
	MinFreeBytes int64
	// FS is the file system of the log and the projections (nil: the
	// operating system's); tests fill the disk through it.
	FS vfs.FS
	// NoAdminKey opens the gate without an admin key: none is read or
	// minted, and AdminKeyHash stays empty. For the commands that serve no
	// API (replay, the offline key commands): they must never mint one.
	NoAdminKey bool
}

// Gate is an opened embedded gate: one partition on the local disk.
type Gate struct {
	Log     *pebblelog.Log
	Store   *projections.Store
	Keyring *attest.Keyring
	Worker  *handlers.Worker
	NodeID  string
	// AdminKeyHash is the hex SHA-256 of the admin API key.
	AdminKeyHash string
	// NewAdminKey is the admin key minted on this start ("" otherwise).
	NewAdminKey string
}

// File names inside the data dir.
const (
	logDir       = "log"
	stateDir     = "state"
	adminKeyFile = "admin_key.sha256"
)

// OpenGate opens (creating on first start) the gate in opts.DataDir and
// recovers its state. The caller runs g.Worker.Run and closes g.
func OpenGate(opts Options) (_ *Gate, err error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	g := &Gate{}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if g.NodeID, err = attest.NodeID(opts.DataDir); err != nil {
		return nil, err
	}
	if !opts.NoAdminKey {
		if g.AdminKeyHash, g.NewAdminKey, err = adminKey(opts.DataDir, opts.AdminKey); err != nil {
			return nil, err
		}
	}
	if g.Keyring, err = attest.OpenKeyring(opts.DataDir); err != nil {
		return nil, fmt.Errorf("opening signing keys: %w", err)
	}
	if g.Log, err = pebblelog.Open(filepath.Join(opts.DataDir, logDir), pebblelog.Options{Logger: opts.Logger, MinFreeBytes: opts.MinFreeBytes, FS: opts.FS}); err != nil {
		return nil, fmt.Errorf("opening log: %w", err)
	}
	if g.Store, err = projections.OpenWith(filepath.Join(opts.DataDir, stateDir), projections.Options{Logger: opts.Logger, MinFreeBytes: opts.MinFreeBytes, FS: opts.FS}); err != nil {
		return nil, err
	}
	g.Worker, err = handlers.NewWorker(handlers.WorkerConfig{
		Log: g.Log, Store: g.Store, Signer: g.Keyring.SignerTTL(g.NodeID, opts.AttestationTTL),
		Clock: opts.Clock, Config: opts.Config, Logger: opts.Logger, OnBatch: opts.OnBatch,
		Verifier: opts.Verifier, Checkpoint: opts.Checkpoint,
	})
	if err != nil {
		return nil, fmt.Errorf("recovering state: %w", err)
	}
	return g, nil
}

// Close closes the log and the store (after the worker has stopped).
func (g *Gate) Close() error {
	var errs []error
	if g.Store != nil {
		errs = append(errs, g.Store.Close())
	}
	if g.Log != nil {
		errs = append(errs, g.Log.Close())
	}
	return errors.Join(errs...)
}

// adminKey returns the admin key hash, minting and storing one on first
// start when none is given.
func adminKey(dir, given string) (hash, minted string, err error) {
	if given != "" {
		return command.HashSecret(given), "", nil
	}
	p := filepath.Join(dir, adminKeyFile)
	b, err := os.ReadFile(p)
	if err == nil {
		h := strings.TrimSpace(string(b))
		if len(h) != 64 {
			return "", "", fmt.Errorf("admin key hash in %s is malformed", p)
		}
		return h, "", nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("reading admin key hash: %w", err)
	}
	minted = command.NewSecret(command.AdminKeyPrefix)
	hash = command.HashSecret(minted)
	if err := writeFileSync(p, []byte(hash+"\n")); err != nil {
		return "", "", fmt.Errorf("writing admin key hash: %w", err)
	}
	return hash, minted, nil
}

func writeFileSync(p string, b []byte) error {
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

var _ streams.Log = (*pebblelog.Log)(nil)
