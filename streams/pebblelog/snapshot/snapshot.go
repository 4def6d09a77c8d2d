package snapshot

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentgate/agentgate/streams/pebblelog"
)

// LogDir is the folder of the event log inside a data directory.
const LogDir = "log"

// lockFile is Pebble's directory lock: never copied (the copy takes its own).
const lockFile = "LOCK"

// Snapshot is an opened copy of an event log. Log reads it; Close closes
// it and removes the copy.
type Snapshot struct {
	Log *pebblelog.Log
	dir string
}

// Open copies dataDir/log into a new temporary directory and opens the
// copy. It fails when dataDir holds no log (it never creates one).
func Open(dataDir string, logger *slog.Logger) (*Snapshot, error) {
	if logger == nil {
		logger = slog.Default()
	}
	src := filepath.Join(dataDir, LogDir)
	entries, err := os.ReadDir(src)
	if err != nil {
		return nil, fmt.Errorf("listing the log in %s: %w", dataDir, err)
	}
	tmp, err := os.MkdirTemp("", "agentgate-snapshot-")
	if err != nil {
		return nil, fmt.Errorf("creating snapshot dir: %w", err)
	}
	dst := filepath.Join(tmp, LogDir)
	if err := copyDir(src, dst, entries); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("copying the log of %s: %w", dataDir, err)
	}
	l, err := pebblelog.Open(dst, pebblelog.Options{Logger: logger, CacheSizeBytes: 64 << 20})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("opening the copy of the log of %s: %w", dataDir, err)
	}
	return &Snapshot{Log: l, dir: tmp}, nil
}

// Close closes the copy and removes it.
func (s *Snapshot) Close() error {
	err := s.Log.Close()
	return errors.Join(err, os.RemoveAll(s.dir))
}

// copyDir links or copies the files of src into dst (created).
func copyDir(src, dst string, entries []os.DirEntry) error {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if name == lockFile {
			continue
		}
		if e.IsDir() {
			sub, err := os.ReadDir(filepath.Join(src, name))
			if err != nil {
				return err
			}
			if err := copyDir(filepath.Join(src, name), filepath.Join(dst, name), sub); err != nil {
				return err
			}
			continue
		}
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if immutable(name) {
			if err := os.Link(from, to); err == nil {
				continue
			}
		}
		if err := copyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}

// immutable reports whether Pebble never rewrites the file once written:
// tables and blob files.
func immutable(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
