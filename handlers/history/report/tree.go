package report

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/agentgate/agentgate/streams"
)

// The log's Merkle tree (RFC 6962 §2.1, as RFC 9162 §2.1 keeps it): leaf i
// is the 32-byte SHA-256 of the bytes of the event at seq i+1, the hash
// the next event's prev names, so the tree commits to exactly the hash
// chain, and its last leaf is the chain's head.
var hasher = rfc6962.DefaultHasher

// MaxProofHashes bounds an inclusion proof read from a bundle: a tree of
// 2^64 leaves needs 64.
const MaxProofHashes = 64

// chainHash returns the SHA-256 of an event's bytes.
func chainHash(payload []byte) []byte {
	h := sha256.Sum256(payload)
	return h[:]
}

// leafHash returns the tree's leaf hash of an event.
func leafHash(payload []byte) []byte { return hasher.HashLeaf(chainHash(payload)) }

// proveLeaves reads the first size records of log and returns the tree's
// root and the inclusion proof of each leaf index (0-based) of indices.
// Memory is the proofs' nodes, never the tree.
func proveLeaves(ctx context.Context, log streams.Log, size uint64, indices []uint64) ([]byte, [][][]byte, error) {
	plans := make([]proof.Nodes, len(indices))
	need := map[compact.NodeID][]byte{}
	for i, idx := range indices {
		p, err := proof.Inclusion(idx, size)
		if err != nil {
			return nil, nil, fmt.Errorf("planning the proof of leaf %d: %w", idx, err)
		}
		plans[i] = p
		for _, id := range p.IDs {
			need[id] = nil
		}
	}
	visit := func(id compact.NodeID, h []byte) {
		if _, ok := need[id]; ok {
			need[id] = h
		}
	}
	rf := &compact.RangeFactory{Hash: hasher.HashChildren}
	rng := rf.NewEmptyRange(0)
	var n uint64
	err := log.Read(ctx, 1, func(r streams.Record) error {
		if r.Seq != n+1 {
			return fmt.Errorf("record %d where %d was expected", r.Seq, n+1)
		}
		if err := rng.Append(leafHash(r.Payload), visit); err != nil {
			return err
		}
		n++
		if n == size {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, nil, fmt.Errorf("hashing the log's tree: %w", err)
	}
	if n != size {
		return nil, nil, fmt.Errorf("hashing the log's tree: the log holds %d events, fewer than %d", n, size)
	}
	root, err := rng.GetRootHash(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("hashing the log's tree: %w", err)
	}
	proofs := make([][][]byte, len(plans))
	for i, p := range plans {
		hs := make([][]byte, len(p.IDs))
		for j, id := range p.IDs {
			if hs[j] = need[id]; hs[j] == nil {
				return nil, nil, fmt.Errorf("hashing the log's tree: node %+v of leaf %d's proof was not computed", id, indices[i])
			}
		}
		if proofs[i], err = p.Rehash(hs, hasher.HashChildren); err != nil {
			return nil, nil, fmt.Errorf("building the proof of leaf %d: %w", indices[i], err)
		}
	}
	return root, proofs, nil
}

// verifyLeaf checks the hex proof of the leaf whose hash is leaf at index
// in the tree of size whose root is root.
func verifyLeaf(index, size uint64, leaf []byte, hexProof []string, root []byte) error {
	if len(hexProof) > MaxProofHashes {
		return fmt.Errorf("a proof of %d hashes, more than %d", len(hexProof), MaxProofHashes)
	}
	p := make([][]byte, len(hexProof))
	for i, h := range hexProof {
		b, err := decodeHash(h)
		if err != nil {
			return fmt.Errorf("proof hash %d: %w", i, err)
		}
		p[i] = b
	}
	err := proof.VerifyInclusion(hasher, index, size, leaf, p, root)
	var rm proof.RootMismatchError
	if errors.As(err, &rm) {
		return fmt.Errorf("its proof leads to root %x, not the tree's %x", rm.CalculatedRoot, rm.ExpectedRoot)
	}
	return err
}

// decodeHash decodes a hex SHA-256.
func decodeHash(h string) ([]byte, error) {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("%q is not a hex SHA-256", h)
	}
	return b, nil
}

func hexAll(hs [][]byte) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = hex.EncodeToString(h)
	}
	return out
}

// agentDigest is the hex SHA-256 of the agent's events as a list: for each,
// in log order, its seq (8 bytes, big-endian) and its chain hash. The
// signed tree head names it, so no event can be added, dropped or swapped
// without the signature failing.
func agentDigest(seqs []uint64, payloads [][]byte) string {
	h := sha256.New()
	var b [8]byte
	for i, s := range seqs {
		binary.BigEndian.PutUint64(b[:], s)
		h.Write(b[:])
		h.Write(chainHash(payloads[i]))
	}
	return hex.EncodeToString(h.Sum(nil))
}
