package attest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// nodeIDFile is the file of the node ID inside the data directory.
const nodeIDFile = "node_id"

// NodeID returns the ID of the node whose data directory is dir: the one
// recorded in dir/node_id, or, on the first start (no file, or an empty
// one), a new "node_" + 16 hex digits, written durably (a temporary file,
// fsync, rename, the directory synced) before it is returned. It names the
// gate as the signer of its attestations and tree heads, in both
// deployments, so it never changes once recorded.
func NodeID(dir string) (string, error) {
	id, err := readNodeID(dir)
	if err == nil && id != "" {
		return id, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("drawing a node id: %w", err)
	}
	id = "node_" + hex.EncodeToString(r[:])
	if err := writeNodeID(dir, id); err != nil {
		return "", err
	}
	return id, nil
}

// ReadNodeID returns the node ID recorded in dir without creating one, for
// the commands that only read a data directory (export): a missing or
// empty file is an error.
func ReadNodeID(dir string) (string, error) {
	id, err := readNodeID(dir)
	if err == nil && id == "" {
		err = errors.New("node_id is empty")
	}
	if err != nil {
		return "", fmt.Errorf("reading the node ID of %s: %w", dir, err)
	}
	return id, nil
}

// readNodeID reads dir/node_id ("" when the file is empty).
func readNodeID(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, nodeIDFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("reading node id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeNodeID records id in dir/node_id durably.
func writeNodeID(dir, id string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	p := filepath.Join(dir, nodeIDFile)
	tmp, err := os.CreateTemp(dir, "."+nodeIDFile+"-*") // 0600
	if err != nil {
		return fmt.Errorf("writing node id: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(id + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("writing node id: %w", err)
	}
	return nil
}
