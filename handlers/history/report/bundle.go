package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/streams"
)

// BundleFormat names the layout of the JSON export: a tenant-scoped
// bundle (issue 11). Bundles of the earlier layout (v1, a contiguous
// chain segment with every agent's events) are refused by ReadBundle.
const BundleFormat = "agentgate.compliance-bundle.v2"

// Bundle is the JSON export: the agent's own events in the clear, each
// with its inclusion proof in the log's Merkle tree, the signed head of
// that tree, the signed checkpoint the report names, the report and the
// JWKS. No other agent's event is in it, in any form: they are inside
// the proofs' subtree hashes.
type Bundle struct {
	Format    string `json:"format"`
	Partition int32  `json:"partition"`
	// Tree is the Merkle tree of the partition's first Tree.Size events
	// (Size = Report.ProducedAt.Seq).
	Tree TreeHead `json:"tree"`
	// Checkpoint is the checkpoint Report.ProducedAt names (nil: none).
	Checkpoint *BundleCheckpoint `json:"checkpoint"`
	// Events are the agent's own events (IsOwn) from seq 1 to Tree.Size,
	// in log order.
	Events []BundleEvent   `json:"events"`
	Report *Report         `json:"report"`
	JWKS   json.RawMessage `json:"jwks"`
}

// TreeHead is a signed tree head: the root of the tree, its size, its
// last leaf (the chain head, with its proof) and the signature
// (attest.TreeHeadClaims) that also binds the agent, the period, the
// position's time and the list of the agent's events.
type TreeHead struct {
	Size      uint64   `json:"size"`
	Root      string   `json:"root"`
	Head      string   `json:"head"`
	HeadProof []string `json:"head_proof"`
	Signature string   `json:"signature"`
}

// BundleCheckpoint is a log.checkpointed event as the log stores it, with
// its inclusion proof when it is inside the tree (it is the event right
// after the tree otherwise, whose prev is the tree's head).
type BundleCheckpoint struct {
	Event string   `json:"event"`
	Proof []string `json:"proof,omitempty"`
}

// BundleEvent is one of the agent's events: its seq, its bytes as the log
// stores them and its inclusion proof (leaf seq-1).
type BundleEvent struct {
	Seq   uint64   `json:"seq"`
	Event string   `json:"event"`
	Proof []string `json:"proof"`
}

// SignTree signs a tree head (attest.Keyring.SignTreeHead for a node).
type SignTree func(attest.TreeHeadClaims) (string, error)

// WriteBundle builds the report of opts from log and writes its bundle to
// w. The log is read twice (the report and the agent's events, then the
// tree's hashes); only the agent's events and their proofs are held, so
// memory and size grow with the agent's events and the log's logarithm.
// Nothing is written to w before everything is computed: an error leaves
// w untouched. jwks is the key set of the gate's signing keys, sign signs
// the tree head.
func WriteBundle(ctx context.Context, w io.Writer, log streams.Log, opts Options, jwks []byte, sign SignTree) (*Report, error) {
	var keys bytes.Buffer
	if err := json.Compact(&keys, jwks); err != nil {
		return nil, fmt.Errorf("reading the JWKS: %w", err)
	}
	if sign == nil {
		return nil, errors.New("writing bundle: no tree head signer")
	}
	var seqs []uint64
	var payloads [][]byte
	b, err := run(ctx, log, opts, func(r streams.Record) error {
		seqs = append(seqs, r.Seq)
		payloads = append(payloads, bytes.Clone(r.Payload))
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	rep := b.rep
	size := rep.ProducedAt.Seq
	indices := make([]uint64, 0, len(seqs)+2)
	for _, s := range seqs {
		indices = append(indices, s-1)
	}
	indices = append(indices, size-1)
	ck := rep.ProducedAt.Checkpoint
	if ck != nil && ck.EventSeq <= size {
		indices = append(indices, ck.EventSeq-1)
	}
	root, proofs, err := proveLeaves(ctx, log, size, indices)
	if err != nil {
		return nil, err
	}
	claims := treeClaims(rep, opts.Partition, size, hex.EncodeToString(root), seqs, payloads)
	sig, err := sign(claims)
	if err != nil {
		return nil, err
	}
	tree := TreeHead{Size: size, Root: claims.Root, Head: claims.Head, HeadProof: hexAll(proofs[len(seqs)]), Signature: sig}
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "{\"format\":%q,\"partition\":%d,\n\"tree\":", BundleFormat, opts.Partition)
	writeJSON(bw, tree)
	bw.WriteString(",\n\"checkpoint\":")
	if ck == nil {
		bw.WriteString("null")
	} else {
		bw.WriteString(`{"event":`)
		writeJSONString(bw, b.ckptEvent)
		if ck.EventSeq <= size {
			bw.WriteString(`,"proof":`)
			writeJSON(bw, hexAll(proofs[len(seqs)+1]))
		}
		bw.WriteByte('}')
	}
	bw.WriteString(",\n\"events\":[")
	for i, s := range seqs {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "\n{\"seq\":%d,\"event\":", s)
		writeJSONString(bw, payloads[i])
		bw.WriteString(`,"proof":`)
		writeJSON(bw, hexAll(proofs[i]))
		bw.WriteByte('}')
	}
	bw.WriteString("\n],\n\"report\":")
	out, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return nil, fmt.Errorf("encoding report: %w", err)
	}
	bw.Write(out)
	bw.WriteString(",\n\"jwks\":")
	bw.Write(keys.Bytes())
	bw.WriteString("}\n")
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("writing bundle: %w", err)
	}
	return rep, nil
}

// treeClaims are the claims of the tree head of rep.
func treeClaims(rep *Report, partition int32, size uint64, root string, seqs []uint64, payloads [][]byte) attest.TreeHeadClaims {
	t := rep.ProducedAt.Time.UTC()
	return attest.TreeHeadClaims{
		IssuedAt: t.Unix(), Partition: partition, Size: size, Root: root, Head: rep.ProducedAt.Hash,
		Time: t.Format(time.RFC3339Nano), AgentID: rep.Agent.AgentID,
		AgentEvents: uint64(len(seqs)), AgentDigest: agentDigest(seqs, payloads),
		PeriodFrom: rep.Period.From.UTC().Format(time.RFC3339Nano), PeriodTo: rep.Period.To.UTC().Format(time.RFC3339Nano),
	}
}

// writeJSON writes v's JSON encoding (of values that always encode).
func writeJSON(w *bufio.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(b)
}

// VerifyOptions tune VerifyBundle.
type VerifyOptions struct {
	// JWKS, when set, replaces the bundled key set: keys obtained from
	// the operator by another channel, so that a bundle whose JWKS was
	// swapped together with re-signed heads does not verify.
	JWKS []byte
	// SkipSignatures checks the proofs and the report but no signature.
	SkipSignatures bool
}

// writeJSONString writes p as a JSON string: quotes, backslashes and
// control bytes escaped, everything else (valid UTF-8: the log's payloads
// are JSON) as is. Decoding it gives p back byte for byte.
func writeJSONString(w *bufio.Writer, p []byte) {
	const hex = "0123456789abcdef"
	w.WriteByte('"')
	start := 0
	for i, c := range p {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.Write(p[start:i])
		switch c {
		case '"', '\\':
			w.WriteByte('\\')
			w.WriteByte(c)
		default:
			w.WriteString(`\u00`)
			w.WriteByte(hex[c>>4])
			w.WriteByte(hex[c&0xf])
		}
		start = i + 1
	}
	w.Write(p[start:])
	w.WriteByte('"')
}

// BundleCheck is the outcome of VerifyBundle.
type BundleCheck struct {
	// TreeSize is the number of log events the bundle's tree covers;
	// Events the agent's events verified in it, Attestations theirs.
	TreeSize     uint64 `json:"tree_size"`
	Events       int    `json:"agent_events"`
	Attestations int    `json:"attestations"`
	// Problems lists every way the bundle does not prove its report;
	// empty when it does.
	Problems []string `json:"problems"`
	// Signed is the last seq the named checkpoint covers (0: none);
	// Unsigned counts the tree's events after it.
	Signed   uint64 `json:"signed_through_seq"`
	Unsigned int64  `json:"unsigned_events"`
}

// OK reports whether the bundle verified.
func (c *BundleCheck) OK() bool { return c != nil && len(c.Problems) == 0 }

// ReadBundle decodes a bundle.
func ReadBundle(r io.Reader) (*Bundle, error) {
	dec := json.NewDecoder(r)
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("decoding bundle: %w", err)
	}
	if b.Format != BundleFormat {
		return nil, fmt.Errorf("decoding bundle: format %q, want %q", b.Format, BundleFormat)
	}
	if b.Report == nil {
		return nil, errors.New("decoding bundle: no report")
	}
	return &b, nil
}

// VerifyBundle checks a bundle offline and says what does not hold:
//
//   - the tree head's signature verifies against the JWKS (the bundled
//     one, or VerifyOptions.JWKS) and binds the bundle's tree, partition,
//     agent, period and position, and the list of the agent's events;
//   - the tree's last leaf is its head, and the report is produced there;
//   - each event is the agent's own (IsOwn), at the seq it says, in log
//     order, inside the tree by its inclusion proof, its attestations
//     verify and attest it; together they are the list the head signs,
//     so none was dropped, added, altered or swapped;
//   - the named checkpoint's signature verifies, it covers the event
//     before it, and it is in the tree (or right after it, chained to its
//     head);
//   - the report, rebuilt from the agent's events, is the bundle's.
//
// The error is for a bundle that cannot be read at all.
func VerifyBundle(ctx context.Context, b *Bundle, opts VerifyOptions) (*BundleCheck, error) {
	chk := &BundleCheck{Problems: []string{}}
	problem := func(format string, args ...any) { chk.Problems = append(chk.Problems, fmt.Sprintf(format, args...)) }
	rep := b.Report
	var keys *attest.KeySet
	if !opts.SkipSignatures {
		jwks := []byte(b.JWKS)
		if opts.JWKS != nil {
			jwks = opts.JWKS
		}
		var err error
		if keys, err = attest.ParseJWKS(jwks); err != nil {
			problem("the JWKS does not parse: %v", err)
			return chk, nil
		}
	}
	size := b.Tree.Size
	chk.TreeSize = size
	root, errRoot := decodeHash(b.Tree.Root)
	head, errHead := decodeHash(b.Tree.Head)
	if size == 0 || errRoot != nil || errHead != nil {
		problem("the tree head is unreadable: size %d, root %q, head %q", size, b.Tree.Root, b.Tree.Head)
		return chk, nil
	}
	if err := verifyLeaf(size-1, size, hasher.HashLeaf(head), b.Tree.HeadProof, root); err != nil {
		problem("the tree's last leaf is not its head: %v", err)
	}
	pos := rep.ProducedAt
	if pos.Partition != b.Partition || pos.Seq != size || pos.Hash != b.Tree.Head {
		problem("the report is produced at partition %d seq %d (%s), the tree ends at partition %d seq %d (%s)",
			pos.Partition, pos.Seq, pos.Hash, b.Partition, size, b.Tree.Head)
	}
	// The agent's events.
	seqs := make([]uint64, 0, len(b.Events))
	payloads := make([][]byte, 0, len(b.Events))
	own := &eventsLog{partition: b.Partition}
	for i, e := range b.Events {
		p := []byte(e.Event)
		ev, err := eventjson.DecodeEvent(p)
		switch {
		case err != nil:
			problem("event %d does not decode: %v", i, err)
			continue
		case ev.Seq != e.Seq || e.Seq == 0 || e.Seq > size:
			problem("event %d is seq %d, the bundle says %d (the tree holds 1 to %d)", i, ev.Seq, e.Seq, size)
			continue
		case len(seqs) > 0 && e.Seq <= seqs[len(seqs)-1]:
			problem("event %d (seq %d) is not after seq %d", i, e.Seq, seqs[len(seqs)-1])
			continue
		case ev.Partition != b.Partition:
			problem("event %d (seq %d) belongs to partition %d", i, e.Seq, ev.Partition)
			continue
		case !IsOwn(ev, rep.Agent.AgentID) && !IsOwnVerdict(ev, rep.Agent.AgentID, rep.Agent.PrincipalID):
			problem("event %d (seq %d, %s of %q) is not one of %s's own events", i, e.Seq, ev.Type, ev.AgentID, rep.Agent.AgentID)
			continue
		}
		if err := verifyLeaf(e.Seq-1, size, leafHash(p), e.Proof, root); err != nil {
			problem("event seq %d is not in the tree: %v", e.Seq, err)
			continue
		}
		n, err := audit.CheckRecord(keys, audit.Record{Partition: b.Partition, Offset: int64(i), Seq: e.Seq, Payload: p})
		if err != nil {
			problem("event seq %d: %v", e.Seq, err)
			continue
		}
		chk.Attestations += n
		seqs = append(seqs, e.Seq)
		payloads = append(payloads, p)
		own.recs = append(own.recs, streams.Record{Seq: e.Seq, Payload: p})
	}
	chk.Events = len(seqs)
	// The signed tree head.
	if keys != nil {
		claims, err := keys.VerifyTreeHead(b.Tree.Signature)
		if err != nil {
			problem("the tree head's signature does not verify: %v", err)
		} else if want := treeClaims(rep, b.Partition, size, b.Tree.Root, seqs, payloads); !sameTree(claims, &want) {
			got, _ := json.Marshal(claims)
			exp, _ := json.Marshal(want)
			problem("the tree head's signature is valid but signs another bundle: it signs %s, the bundle says %s", got, exp)
		}
	}
	checkpoint(b, keys, size, root, chk, problem)
	// The report, rebuilt from the agent's events.
	bo := Options{AgentID: rep.Agent.AgentID, From: rep.Period.From, To: rep.Period.To, Partition: b.Partition}
	again, err := run(ctx, own, bo, nil, &pos)
	if err != nil {
		problem("rebuilding the report from the agent's events: %v", err)
		return chk, nil
	}
	same := func(name string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			problem("%s: the report says %s, the agent's events say %s", name, ja, jb)
		}
	}
	same("format", rep.Format, again.rep.Format)
	same("agent", rep.Agent, again.rep.Agent)
	same("period", rep.Period, again.rep.Period)
	same("summary", rep.Summary, again.rep.Summary)
	same("trust_level_at_start", rep.TrustAtStart, again.rep.TrustAtStart)
	same("trust_history", rep.Trust, again.rep.Trust)
	same("budget_limits", rep.Limits, again.rep.Limits)
	same("exceptions", rep.Exceptions, again.rep.Exceptions)
	same("attestations", rep.Attestations, again.rep.Attestations)
	same("a2a", rep.A2A, again.rep.A2A)
	same("transactions", rep.Transactions, again.rep.Transactions)
	if len(rep.Days) != len(again.rep.Days) {
		problem("days: the report has %d, the agent's events %d", len(rep.Days), len(again.rep.Days))
	} else {
		for i := range rep.Days {
			same("days["+strconv.Itoa(i)+"]", rep.Days[i], again.rep.Days[i])
		}
	}
	return chk, nil
}

// sameTree compares signed claims with the bundle's, but for the issuer.
func sameTree(got, want *attest.TreeHeadClaims) bool {
	g := *got
	g.Issuer = ""
	return g == *want
}

// checkpoint checks the checkpoint the report names.
func checkpoint(b *Bundle, keys *attest.KeySet, size uint64, root []byte, chk *BundleCheck, problem func(string, ...any)) {
	named := b.Report.ProducedAt.Checkpoint
	switch {
	case named == nil && b.Checkpoint == nil:
		return
	case named == nil || b.Checkpoint == nil:
		problem("the report names checkpoint %v, the bundle holds %v", named != nil, b.Checkpoint != nil)
		return
	}
	p := []byte(b.Checkpoint.Event)
	ev, err := eventjson.DecodeEvent(p)
	if err != nil || ev.Type != domain.EvLogCheckpointed || ev.Checkpoint == nil {
		problem("the checkpoint is not a readable log.checkpointed event")
		return
	}
	if _, err := audit.CheckRecord(keys, audit.Record{Partition: b.Partition, Offset: -1, Seq: ev.Seq, Payload: p}); err != nil {
		problem("the checkpoint: %v", err)
		return
	}
	got := Checkpoint{EventSeq: ev.Seq, CoversSeq: ev.Checkpoint.Seq, Head: ev.Checkpoint.Head, Time: ev.Time.UTC(),
		KeyID: tokenKID(ev.Checkpoint.Signature)}
	if !reflect.DeepEqual(*named, got) {
		problem("the report names checkpoint %+v, the bundle's is %+v", *named, got)
		return
	}
	switch {
	case ev.Seq == size+1:
		if (streams.Head{Seq: size, Hash: b.Tree.Head}).Link(ev.Seq, ev.Prev) != streams.LinkNext {
			problem("the checkpoint after the tree does not follow its head: prev %s, head %s", ev.Prev, b.Tree.Head)
			return
		}
	case ev.Seq >= 1 && ev.Seq <= size:
		if err := verifyLeaf(ev.Seq-1, size, leafHash(p), b.Checkpoint.Proof, root); err != nil {
			problem("the checkpoint is not in the tree: %v", err)
			return
		}
	default:
		problem("the checkpoint at seq %d is neither in the tree of %d events nor right after it", ev.Seq, size)
		return
	}
	chk.Signed = got.CoversSeq
	if size >= got.CoversSeq {
		chk.Unsigned = int64(size - got.CoversSeq)
	}
}

// eventsLog is a read-only streams.Log over a bundle's events (not
// contiguous: the seqs of the agent's events).
type eventsLog struct {
	partition int32
	recs      []streams.Record
}

func (l *eventsLog) Append(context.Context, []streams.Record) error {
	return errors.New("a bundle's events are read-only")
}

func (l *eventsLog) Head() streams.Head {
	if len(l.recs) == 0 {
		return streams.Head{}
	}
	r := l.recs[len(l.recs)-1]
	return streams.Head{Seq: r.Seq, Hash: r.Hash()}
}

func (l *eventsLog) Read(ctx context.Context, from uint64, fn func(streams.Record) error) error {
	for _, r := range l.recs {
		if r.Seq < from {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (l *eventsLog) Close() error { return nil }
