package attest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// keysDir is the folder of the key files inside the data directory.
const keysDir = "keys"

// pemType is the PEM block type of a PKCS#8 private key (RFC 7468 §10).
const pemType = "PRIVATE KEY"

// maxKeyFileBytes bounds a key file read from disk.
const maxKeyFileBytes = 16 << 10

// seqDigits is the width of the sequence number that starts a key file name.
const seqDigits = 6

// Keyring holds the attestation signing keys persisted in a data directory.
// The key with the highest sequence number is active: it signs new
// attestations. Older keys sign nothing new but stay in the JWKS.
type Keyring struct {
	dir string

	rotateMu sync.Mutex // serializes Rotate

	mu     sync.RWMutex
	keys   []*signingKey // ascending sequence
	byKID  map[string]*signingKey
	jwks   []byte
	logger *slog.Logger
}

type signingKey struct {
	seq  int
	kid  string
	priv *ecdsa.PrivateKey
	pub  jwk
}

// OpenKeyring opens the keyring in dir/keys/, creating the folder (0700) and
// a first P-256 key (a PKCS#8 PEM file, 0600) if it holds none, and loads
// every key file. Key files are named "<sequence>-<kid>.pem"; a file that
// does not parse as a P-256 PKCS#8 key, or whose name does not match its
// key, fails the open (fail closed). Files starting with "." are ignored
// (temporary files of an interrupted creation).
func OpenKeyring(dir string) (*Keyring, error) {
	kr := &Keyring{dir: filepath.Join(dir, keysDir), logger: slog.Default()}
	if err := os.MkdirAll(kr.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating key directory: %w", err)
	}
	if err := kr.load(); err != nil {
		return nil, err
	}
	if len(kr.keys) == 0 {
		if _, err := kr.Rotate(); err != nil {
			return nil, err
		}
	}
	return kr, nil
}

// ReadKeyring loads the keyring in dir/keys/ without creating anything: no
// folder, no key. It fails when the folder holds no key. For the commands
// that only read a data dir (audit, export), which must never mint a
// signing key.
func ReadKeyring(dir string) (*Keyring, error) {
	kr := &Keyring{dir: filepath.Join(dir, keysDir), logger: slog.Default()}
	if err := kr.load(); err != nil {
		return nil, err
	}
	if len(kr.keys) == 0 {
		return nil, fmt.Errorf("reading signing keys: no key in %s", kr.dir)
	}
	return kr, nil
}

// Reload reads the key directory again, so that a key another process
// added (agentgate keys rotate-signing on a running gate's data dir) is
// used: the highest sequence becomes active and the JWKS lists every key.
// On an error (a key file that does not load, fail closed) the keys in use
// stay as they were. Reloads are serialized with Rotate.
func (kr *Keyring) Reload() error {
	kr.rotateMu.Lock()
	defer kr.rotateMu.Unlock()
	return kr.load()
}

// load reads every key file of the directory.
func (kr *Keyring) load() error {
	entries, err := os.ReadDir(kr.dir)
	if err != nil {
		return fmt.Errorf("listing key directory: %w", err)
	}
	var keys []*signingKey
	byKID := make(map[string]*signingKey)
	seqs := make(map[int]bool)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		k, err := kr.loadFile(name)
		if err != nil {
			return err
		}
		if seqs[k.seq] {
			return fmt.Errorf("loading key %s: sequence %d used twice", name, k.seq)
		}
		if byKID[k.kid] != nil {
			return fmt.Errorf("loading key %s: key %s stored twice", name, k.kid)
		}
		seqs[k.seq] = true
		byKID[k.kid] = k
		keys = append(keys, k)
	}
	kr.mu.RLock()
	had := len(kr.keys)
	kr.mu.RUnlock()
	if len(keys) == 0 && had > 0 {
		return fmt.Errorf("reloading signing keys: no key in %s", kr.dir)
	}
	slices.SortFunc(keys, func(a, b *signingKey) int { return a.seq - b.seq })
	pubs := make([]jwk, len(keys))
	for i, k := range keys {
		pubs[i] = k.pub
	}
	jwks, err := encodeJWKS(pubs)
	if err != nil {
		return err
	}
	kr.mu.Lock()
	kr.keys, kr.byKID, kr.jwks = keys, byKID, jwks
	kr.mu.Unlock()
	return nil
}

func (kr *Keyring) loadFile(name string) (*signingKey, error) {
	seqText, rest, ok := strings.Cut(name, "-")
	kidInName, isPEM := strings.CutSuffix(rest, ".pem")
	seq, err := strconv.Atoi(seqText)
	if !ok || !isPEM || err != nil || seq < 1 {
		return nil, fmt.Errorf("loading key %s: name is not <sequence>-<kid>.pem", name)
	}
	path := filepath.Join(kr.dir, name)
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("loading key %s: %w", name, err)
	}
	if info.Size() > maxKeyFileBytes {
		return nil, fmt.Errorf("loading key %s: file of %d bytes is too large for a key", name, info.Size())
	}
	if info.Mode().Perm()&0o077 != 0 {
		kr.logger.Warn("attestation key file is readable by other users", "path", path, "mode", info.Mode().Perm().String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading key %s: %w", name, err)
	}
	priv, err := decodeKey(data)
	if err != nil {
		return nil, fmt.Errorf("loading key %s: %w", name, err)
	}
	k, err := newSigningKey(seq, priv)
	if err != nil {
		return nil, fmt.Errorf("loading key %s: %w", name, err)
	}
	if k.kid != kidInName {
		return nil, fmt.Errorf("loading key %s: key thumbprint is %s, not the kid in the file name", name, k.kid)
	}
	return k, nil
}

func decodeKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, rest := pem.Decode(data)
	if block == nil || block.Type != pemType {
		return nil, fmt.Errorf("decoding PEM: no %q block", pemType)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("decoding PEM: data after the key block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing PKCS#8: %w", err)
	}
	priv, ok := key.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, errors.New("parsing PKCS#8: not an ECDSA P-256 key")
	}
	return priv, nil
}

func newSigningKey(seq int, priv *ecdsa.PrivateKey) (*signingKey, error) {
	pub, err := publicJWK(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	return &signingKey{seq: seq, kid: pub.Kid, priv: priv, pub: pub}, nil
}

// maxCreateAttempts bounds the retries when another process creates a key
// with the same sequence number at the same time.
const maxCreateAttempts = 3

// Rotate creates a new P-256 key, persists it and makes it active; it
// returns the new kid. Older keys are kept: tokens they signed still verify
// against the JWKS. The key file is written to a temporary name, synced and
// then linked into place, so a crash never leaves a partial key file.
//
// A data directory belongs to one process at a time (the gate's Pebble
// store locks it); within the process Rotate calls are serialized.
func (kr *Keyring) Rotate() (string, error) {
	kr.rotateMu.Lock()
	defer kr.rotateMu.Unlock()
	for attempt := 0; ; attempt++ {
		kr.mu.RLock()
		next := 1
		if n := len(kr.keys); n > 0 {
			next = kr.keys[n-1].seq + 1
		}
		kr.mu.RUnlock()
		kid, err := kr.create(next)
		if errors.Is(err, fs.ErrExist) && attempt+1 < maxCreateAttempts {
			if err := kr.load(); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", err
		}
		if err := kr.load(); err != nil {
			return "", err
		}
		kr.logger.Info("created attestation signing key", "kid", kid, "sequence", next, "dir", kr.dir)
		return kid, nil
	}
}

// create generates and persists the key with sequence seq. It fails with an
// error wrapping fs.ErrExist if that sequence is taken.
func (kr *Keyring) create(seq int) (string, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generating key: %w", err)
	}
	k, err := newSigningKey(seq, priv)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", fmt.Errorf("encoding PKCS#8: %w", err)
	}
	tmp, err := os.CreateTemp(kr.dir, ".key-*.tmp") // mode 0600
	if err != nil {
		return "", fmt.Errorf("creating key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := pem.Encode(tmp, &pem.Block{Type: pemType, Bytes: der}); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("syncing key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("closing key file: %w", err)
	}
	name := fmt.Sprintf("%0*d-%s.pem", seqDigits, seq, k.kid)
	// Link fails if the name exists; a concurrent creator's key is never
	// overwritten.
	if err := kr.linkSequence(tmp.Name(), seq, name); err != nil {
		return "", err
	}
	if err := syncDir(kr.dir); err != nil {
		return "", err
	}
	return k.kid, nil
}

// linkSequence links tmp to name unless a key file with sequence seq exists.
func (kr *Keyring) linkSequence(tmp string, seq int, name string) error {
	prefix := fmt.Sprintf("%0*d-", seqDigits, seq)
	entries, err := os.ReadDir(kr.dir)
	if err != nil {
		return fmt.Errorf("listing key directory: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			return fmt.Errorf("creating key %s: sequence %d is taken: %w", name, seq, fs.ErrExist)
		}
	}
	if err := os.Link(tmp, filepath.Join(kr.dir, name)); err != nil {
		return fmt.Errorf("linking key file: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening key directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing key directory: %w", err)
	}
	return nil
}

// ActiveKID returns the kid of the key that signs new attestations.
func (kr *Keyring) ActiveKID() string {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	return kr.keys[len(kr.keys)-1].kid
}

// KIDs returns the kids of all keys, oldest first.
func (kr *Keyring) KIDs() []string {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	out := make([]string, len(kr.keys))
	for i, k := range kr.keys {
		out[i] = k.kid
	}
	return out
}

// JWKS returns the JSON Web Key Set of every key of the ring, active and
// retired: {"keys":[{"kty":"EC","crv":"P-256","x":…,"y":…,"use":"sig",
// "alg":"ES256","kid":…},…]} sorted by kid. The result is a fresh copy the
// caller may keep.
func (kr *Keyring) JWKS() []byte {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	return bytes.Clone(kr.jwks)
}

// key returns the key named kid if the ring holds it, else the active key.
func (kr *Keyring) key(kid string) *signingKey {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	if kid != "" {
		if k := kr.byKID[kid]; k != nil {
			return k
		}
	}
	return kr.keys[len(kr.keys)-1]
}
