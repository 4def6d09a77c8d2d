package seedlog

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/streams"
)

// WriteFixture writes a frozen log fixture (handlers/history/replay/
// testdata) of the stopped embedded gate in dir to out: log.jsonl, every
// record as pebblelog stored it (seq, prev, payload); state.jsonl, every
// key and value of its projection store in key order; keys/, its signing
// keys; node_id.
func WriteFixture(dir, out string) error {
	if err := os.MkdirAll(filepath.Join(out, "keys"), 0o755); err != nil {
		return err
	}
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, NoAdminKey: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, "log.jsonl"))
	if err != nil {
		return errors.Join(err, g.Close())
	}
	enc := json.NewEncoder(f)
	err = g.Log.Read(context.Background(), 1, func(r streams.Record) error {
		return enc.Encode(struct {
			Seq     uint64 `json:"seq"`
			Prev    string `json:"prev"`
			Payload []byte `json:"payload"`
		}{r.Seq, r.Prev, r.Payload})
	})
	if err := errors.Join(err, f.Close(), g.Close()); err != nil {
		return err
	}
	db, err := pebble.Open(filepath.Join(dir, "state"), &pebble.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	sf, err := os.Create(filepath.Join(out, "state.jsonl"))
	if err != nil {
		return err
	}
	senc := json.NewEncoder(sf)
	it, err := db.NewIter(nil)
	if err != nil {
		return errors.Join(err, sf.Close())
	}
	for it.First(); it.Valid(); it.Next() {
		if err := senc.Encode(struct {
			K []byte `json:"k"`
			V []byte `json:"v"`
		}{it.Key(), it.Value()}); err != nil {
			return errors.Join(err, it.Close(), sf.Close())
		}
	}
	if err := errors.Join(it.Close(), sf.Close()); err != nil {
		return err
	}
	keys, err := os.ReadDir(filepath.Join(dir, "keys"))
	if err != nil {
		return err
	}
	for _, k := range keys {
		b, err := os.ReadFile(filepath.Join(dir, "keys", k.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "keys", k.Name()), b, 0o600); err != nil {
			return err
		}
	}
	id, err := os.ReadFile(filepath.Join(dir, "node_id"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "node_id"), id, 0o644)
}
