package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/streams"
)

// Record is one raw log record as the log stores it.
type Record struct {
	// Partition is the chain the record belongs to.
	Partition int32
	// Offset is the record's position in its source (the Kafka offset, the
	// index in a bundle), reported with a break; -1 when it has none.
	Offset int64
	// Seq and Prev are the values the log stores beside the payload (the
	// Pebble key and header, the Kafka headers). With HasHeader false (a
	// bundle of bare payloads) only the payload's own are checked.
	HasHeader bool
	Seq       uint64
	Prev      string
	// Payload is the event exactly as the log stores it; the chain hashes
	// these bytes.
	Payload []byte
}

// Source yields raw records in log order.
type Source interface {
	// Each calls fn for every record, in order, and returns fn's first
	// error (or its own). The Payload handed to fn is valid only during
	// the call.
	Each(ctx context.Context, fn func(Record) error) error
}

// SourceFunc adapts a function to a Source.
type SourceFunc func(ctx context.Context, fn func(Record) error) error

// Each implements Source.
func (f SourceFunc) Each(ctx context.Context, fn func(Record) error) error { return f(ctx, fn) }

// Payloads is a Source over the payloads of one partition, in order, as
// they were stored (for example the events of a bundle); Offset is the
// index in the slice.
func Payloads(partition int32, payloads [][]byte) Source {
	return SourceFunc(func(ctx context.Context, fn func(Record) error) error {
		for i, p := range payloads {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := fn(Record{Partition: partition, Offset: int64(i), Payload: p}); err != nil {
				return err
			}
		}
		return nil
	})
}

// Head is a chain position recorded outside the log that the log must
// reach (Options.Heads).
type Head struct {
	Partition int32
	Seq       uint64
	Hash      string
	// Source names where the head was recorded, for the report.
	Source string
}

// Options tune Verify. The zero value checks everything from seq 1.
type Options struct {
	// SkipSignatures checks the hash chain, the checkpoints' content and
	// cadence, but no signature: neither checkpoints' nor attestations'.
	// The JWKS may then be nil.
	SkipSignatures bool
	// Partial lets a partition start at any seq (a range of the chain,
	// such as a bundle): the first record's prev is taken on trust, and
	// the cadence rule starts at its first checkpoint.
	Partial bool
	// Superseded applies the Kafka reader rule: records a retried produce
	// or a fenced-out writer left behind are counted, not a break (see
	// the package documentation).
	Superseded bool
	// Heads are positions recorded outside the log that it must reach.
	Heads []Head
}

// Kind classifies a break.
type Kind string

// The kinds of break.
const (
	// KindMalformed: the payload is not an event, or its seq/prev differ
	// from those the log stores beside it, or its partition is not the
	// record's.
	KindMalformed Kind = "malformed"
	// KindGap: a seq is missing (the record read has a higher seq).
	KindGap Kind = "gap"
	// KindOrder: a seq repeats or goes backwards.
	KindOrder Kind = "order"
	// KindPrev: prev is not the SHA-256 of the previous record's bytes:
	// the previous record was altered, or this one forged.
	KindPrev Kind = "prev"
	// KindCheckpoint: a checkpoint's content does not match the chain.
	KindCheckpoint Kind = "checkpoint"
	// KindSignature: a checkpoint's signature does not verify or does not
	// sign its content.
	KindSignature Kind = "signature"
	// KindAttestation: an attestation does not verify or is not bound to
	// its event.
	KindAttestation Kind = "attestation"
	// KindMissingCheckpoint: a checkpoint that was due is not there, and
	// later events are.
	KindMissingCheckpoint Kind = "missing_checkpoint"
	// KindTruncated: the log ends before a position that must exist (a
	// recorded head, a due checkpoint).
	KindTruncated Kind = "truncated"
	// KindHead: the chain passes a recorded head's seq with another hash.
	KindHead Kind = "head"
)

// Break is the first broken link of a chain.
type Break struct {
	Partition int32
	// Seq is the position of the broken link: the record that does not
	// extend the chain, or the first position missing.
	Seq uint64
	// Offset is the source position of the record at fault (-1: none, as
	// for a truncated tail).
	Offset int64
	Kind   Kind
	// Expected and Found say what the chain required and what is there.
	Expected string
	Found    string
	// Detail explains the break in words.
	Detail string
}

// Error implements error: "partition P seq S (offset O): kind: detail
// (expected E, found F)".
func (b *Break) Error() string {
	s := fmt.Sprintf("partition %d seq %d", b.Partition, b.Seq)
	if b.Offset >= 0 {
		s += fmt.Sprintf(" (offset %d)", b.Offset)
	}
	s += ": " + string(b.Kind) + ": " + b.Detail
	if b.Expected != "" || b.Found != "" {
		s += fmt.Sprintf(" (expected %s, found %s)", orNone(b.Expected), orNone(b.Found))
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// PartitionReport sums up one verified chain.
type PartitionReport struct {
	Partition int32 `json:"partition"`
	// Events counts the records of the chain, checkpoints included.
	Events   int64  `json:"events"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	// Head is the hex SHA-256 of the record at LastSeq.
	Head        string `json:"head"`
	Checkpoints int64  `json:"checkpoints"`
	// LastCheckpoint is the seq of the last checkpoint event (0: none);
	// Uncovered counts the events after it, the tail that a cut could
	// remove undetected without an outside head.
	LastCheckpoint uint64 `json:"last_checkpoint_seq"`
	Uncovered      int64  `json:"uncovered"`
	// Attestations counts the attestations verified.
	Attestations int64 `json:"attestations"`
	// Superseded counts the records skipped under the Kafka reader rule.
	Superseded int64 `json:"superseded"`
}

// Report is the outcome of Verify.
type Report struct {
	// Partitions holds one entry per partition seen, by partition number.
	Partitions []PartitionReport `json:"partitions"`
	// Break is the first broken link; nil when every chain is intact.
	Break *Break `json:"break,omitempty"`
}

// OK reports whether no link is broken.
func (r *Report) OK() bool { return r.Break == nil }

// Verify walks src and checks every chain in it (see the package
// documentation), stopping at the first broken link, which it returns in
// Report.Break. jwks is the JSON Web Key Set of the signing keys (nil only
// with SkipSignatures). The error is for what prevented the walk: an
// unusable JWKS, a source that failed, a cancelled ctx.
func Verify(ctx context.Context, src Source, jwks []byte, opts Options) (*Report, error) {
	v := &verifier{opts: opts, chains: map[int32]*chain{}}
	if !opts.SkipSignatures {
		set, err := attest.ParseJWKS(jwks)
		if err != nil {
			return nil, fmt.Errorf("reading the JWKS: %w", err)
		}
		v.keys = set
	}
	for _, h := range opts.Heads {
		c := v.chain(h.Partition)
		c.heads = append(c.heads, h)
	}
	for _, c := range v.chains {
		slices.SortFunc(c.heads, func(a, b Head) int { return cmpUint(a.Seq, b.Seq) })
	}
	err := src.Each(ctx, v.add)
	var brk *Break
	var chainErr *streams.ChainError
	var storageErr *streams.StorageError
	switch {
	case errors.As(err, &brk):
	case errors.As(err, &storageErr):
		brk = storageBreak(storageErr)
	case errors.As(err, &chainErr):
		// The log itself refused a stored record (a malformed header).
		brk = &Break{Partition: v.current, Seq: chainErr.Seq, Offset: -1, Kind: KindMalformed, Detail: chainErr.Reason}
	case err != nil:
		return nil, fmt.Errorf("reading the log: %w", err)
	default:
		brk = v.finish()
	}
	return v.report(brk), nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type verifier struct {
	opts   Options
	keys   *attest.KeySet
	chains map[int32]*chain
	order  []int32
	// current is the partition of the last record added.
	current int32
	// copies checks the partitions' copies of partition 0's
	// principal-wide events (not for a Partial walk).
	copies copies
}

// chain is the walk's state for one partition.
type chain struct {
	rep     PartitionReport
	started bool
	next    uint64   // the seq the next record must have
	head    [64]byte // hex SHA-256 of the last record
	heads   []Head   // outside heads not yet reached, by seq
	// cadence: the policy the last checkpoint declared (nil before it),
	// the first uncovered event's time, and the event that made the next
	// checkpoint due (dueSeq 0: not due).
	policy    *domain.CheckpointPolicy
	firstTime time.Time
	dueSeq    uint64
	dueTime   time.Time
	dueOffset int64
	forks     map[[64]byte]struct{}
}

// link classifies a record with seq and prev against the chain's last
// record (seq next-1; the hash "" before the first) by streams' one chain
// rule, comparing the hashes as bytes: the walk allocates nothing per record.
func (c *chain) link(seq uint64, prev []byte) streams.Link {
	tip := c.head[:]
	if c.next == 1 {
		tip = nil
	}
	return streams.LinkOf(c.next-1, seq, bytes.Equal(prev, tip))
}

func (v *verifier) chain(p int32) *chain {
	c := v.chains[p]
	if c == nil {
		c = &chain{rep: PartitionReport{Partition: p}, next: 1}
		v.chains[p] = c
		v.order = append(v.order, p)
	}
	return c
}

func (v *verifier) report(brk *Break) *Report {
	r := &Report{Break: brk, Partitions: make([]PartitionReport, 0, len(v.order))}
	ps := slices.Clone(v.order)
	slices.Sort(ps)
	for _, p := range ps {
		c := v.chains[p]
		if c.started {
			c.rep.Head = string(c.head[:])
		}
		r.Partitions = append(r.Partitions, c.rep)
	}
	return r
}

// add checks one record; a *Break stops the walk.
func (v *verifier) add(r Record) error {
	v.current = r.Partition
	c := v.chain(r.Partition)
	hdr, err := parseHeader(r.Payload)
	if err != nil {
		return &Break{Partition: r.Partition, Seq: r.Seq, Offset: r.Offset, Kind: KindMalformed,
			Detail: "the payload is not an event: " + err.Error()}
	}
	if r.HasHeader && (r.Seq != hdr.seq || r.Prev != string(hdr.prev)) {
		return &Break{Partition: r.Partition, Seq: r.Seq, Offset: r.Offset, Kind: KindMalformed,
			Expected: fmt.Sprintf("seq %d prev %s (stored beside the payload)", r.Seq, orNone(r.Prev)),
			Found:    fmt.Sprintf("seq %d prev %s (in the payload)", hdr.seq, orNone(string(hdr.prev))),
			Detail:   "the event's seq or prev differ from those the log stores for it"}
	}
	sum := hashHex(r.Payload)
	if v.opts.Superseded && c.superseded(hdr, sum) {
		return nil
	}
	link := c.link(hdr.seq, hdr.prev)
	switch {
	case !c.started && v.opts.Partial:
		c.next = hdr.seq
		copy(c.head[:], hdr.prev)
	case link == streams.LinkGap:
		return &Break{Partition: r.Partition, Seq: c.next, Offset: r.Offset, Kind: KindGap,
			Expected: "seq " + strconv.FormatUint(c.next, 10), Found: "seq " + strconv.FormatUint(hdr.seq, 10),
			Detail: fmt.Sprintf("%d event(s) missing before seq %d", hdr.seq-c.next, hdr.seq)}
	case link == streams.LinkBehind:
		return &Break{Partition: r.Partition, Seq: hdr.seq, Offset: r.Offset, Kind: KindOrder,
			Expected: "seq " + strconv.FormatUint(c.next, 10), Found: "seq " + strconv.FormatUint(hdr.seq, 10),
			Detail: "a seq repeats or goes backwards"}
	case link == streams.LinkFork && c.next == 1:
		return &Break{Partition: r.Partition, Seq: 1, Offset: r.Offset, Kind: KindPrev,
			Expected: `""`, Found: string(hdr.prev), Detail: "the first event has a prev"}
	case link == streams.LinkFork:
		return &Break{Partition: r.Partition, Seq: hdr.seq, Offset: r.Offset, Kind: KindPrev,
			Expected: string(c.head[:]), Found: orNone(string(hdr.prev)),
			Detail: fmt.Sprintf("prev is not the SHA-256 of seq %d as stored: seq %d was altered or seq %d forged", hdr.seq-1, hdr.seq-1, hdr.seq)}
	}
	if hdr.partition != r.Partition {
		return &Break{Partition: r.Partition, Seq: hdr.seq, Offset: r.Offset, Kind: KindMalformed,
			Expected: "partition " + strconv.Itoa(int(r.Partition)), Found: "partition " + strconv.Itoa(int(hdr.partition)),
			Detail: "the event belongs to another partition"}
	}
	if err := c.cadence(hdr, r.Offset); err != nil {
		return err
	}
	if string(hdr.typ) == string(domain.EvLogCheckpointed) {
		if err := v.checkpoint(c, r, hdr); err != nil {
			return err
		}
	} else if !v.opts.SkipSignatures && mayHoldAttestation(hdr.typ, r.Payload) {
		if err := v.attestations(c, r); err != nil {
			return err
		}
	}
	if !v.opts.Partial {
		if err := v.copies.add(r, hdr, sum); err != nil {
			return err
		}
	}
	if !c.started {
		c.started = true
		c.rep.FirstSeq = hdr.seq
	}
	c.head = sum
	c.next = hdr.seq + 1
	c.rep.LastSeq = hdr.seq
	c.rep.Events++
	return c.reachHeads(hdr.seq, r.Offset)
}

func hashHex(p []byte) [64]byte {
	s := sha256.Sum256(p)
	var out [64]byte
	hex.Encode(out[:], s[:])
	return out
}

// superseded applies the Kafka reader rule: a record at or below the head
// (a retried produce, a fenced-out writer that lost the race) or one that
// continues such a record's fork is skipped. It never skips a record that
// extends the chain.
func (c *chain) superseded(h header, sum [64]byte) bool {
	if !c.started {
		return false
	}
	var prev [64]byte
	copy(prev[:], h.prev)
	_, fork := c.forks[prev]
	if c.link(h.seq, nil) != streams.LinkBehind && !(fork && len(h.prev) == 64) {
		return false
	}
	if c.forks == nil {
		c.forks = map[[64]byte]struct{}{}
	}
	c.forks[sum] = struct{}{}
	c.rep.Superseded++
	return true
}

// reachHeads checks the outside heads at seq.
func (c *chain) reachHeads(seq uint64, offset int64) error {
	for len(c.heads) > 0 && c.heads[0].Seq <= seq {
		h := c.heads[0]
		c.heads = c.heads[1:]
		if h.Seq == seq && h.Hash != "" && h.Hash != string(c.head[:]) {
			return &Break{Partition: c.rep.Partition, Seq: seq, Offset: offset, Kind: KindHead,
				Expected: h.Hash, Found: string(c.head[:]),
				Detail: fmt.Sprintf("the head recorded in %s does not hash to this event", h.Source)}
		}
	}
	return nil
}

// cadence applies rule 6 before the event is counted.
func (c *chain) cadence(h header, offset int64) error {
	isCk := string(h.typ) == string(domain.EvLogCheckpointed)
	if c.dueSeq != 0 && !isCk && h.time.After(c.dueTime) {
		return &Break{Partition: c.rep.Partition, Seq: c.dueSeq + 1, Offset: offset, Kind: KindMissingCheckpoint,
			Expected: fmt.Sprintf("a checkpoint covering seq %d", c.dueSeq), Found: fmt.Sprintf("seq %d (%s) at %s", h.seq, h.typ, h.time.Format(time.RFC3339Nano)),
			Detail: fmt.Sprintf("the checkpoint due after seq %d (%s) is missing: events were removed", c.dueSeq, c.dueTime.Format(time.RFC3339Nano))}
	}
	if isCk {
		return nil // checkpoint() resets the cadence once it is verified
	}
	if c.rep.Uncovered == 0 {
		c.firstTime = h.time
	}
	c.rep.Uncovered++
	if c.dueSeq == 0 && c.policy != nil &&
		(c.rep.Uncovered >= c.policy.Events || h.time.Sub(c.firstTime) >= time.Duration(c.policy.Interval)) {
		c.dueSeq, c.dueTime, c.dueOffset = h.seq, h.time, offset
	}
	return nil
}

// finish applies the end-of-log rules: a due checkpoint and the outside
// heads must have been reached.
func (v *verifier) finish() *Break {
	ps := slices.Clone(v.order)
	slices.Sort(ps)
	if z, ok := v.chains[domain.GlobalPartition]; ok && z.started && !v.opts.Partial {
		if brk := v.copies.check(); brk != nil {
			return brk
		}
	}
	for _, p := range ps {
		c := v.chains[p]
		if c.dueSeq != 0 {
			return &Break{Partition: p, Seq: c.next, Offset: -1, Kind: KindTruncated,
				Expected: fmt.Sprintf("a checkpoint covering seq %d", c.dueSeq), Found: fmt.Sprintf("the end of the log after seq %d", c.next-1),
				Detail: fmt.Sprintf("the log ends before the checkpoint due after seq %d (%s), which the gate appends in the same write: the tail was cut", c.dueSeq, c.dueTime.Format(time.RFC3339Nano))}
		}
		if len(c.heads) > 0 {
			h := c.heads[len(c.heads)-1]
			return &Break{Partition: p, Seq: c.next, Offset: -1, Kind: KindTruncated,
				Expected: fmt.Sprintf("seq %d (recorded in %s)", h.Seq, h.Source), Found: fmt.Sprintf("the end of the log after seq %d", c.next-1),
				Detail: fmt.Sprintf("the log ends %d event(s) before the head recorded in %s: the tail was cut", h.Seq-(c.next-1), h.Source)}
		}
	}
	return nil
}

// checkpoint checks a log.checkpointed event (rule 4) and resets the
// cadence.
func (v *verifier) checkpoint(c *chain, r Record, h header) error {
	ev := new(domain.Event)
	if err := json.Unmarshal(r.Payload, ev); err != nil || ev.Checkpoint == nil {
		return &Break{Partition: r.Partition, Seq: h.seq, Offset: r.Offset, Kind: KindMalformed,
			Detail: "a log.checkpointed event without a readable checkpoint"}
	}
	ck := ev.Checkpoint
	if ck.Seq != h.seq-1 || ck.Head != string(h.prev) {
		return &Break{Partition: r.Partition, Seq: h.seq, Offset: r.Offset, Kind: KindCheckpoint,
			Expected: fmt.Sprintf("seq %d head %s", h.seq-1, orNone(string(h.prev))), Found: fmt.Sprintf("seq %d head %s", ck.Seq, orNone(ck.Head)),
			Detail: "the checkpoint does not cover the event before it"}
	}
	if !ck.Next.Valid() {
		return &Break{Partition: r.Partition, Seq: h.seq, Offset: r.Offset, Kind: KindCheckpoint,
			Found:  fmt.Sprintf("%d events / %s", ck.Next.Events, time.Duration(ck.Next.Interval)),
			Detail: "the checkpoint declares no valid policy for the next one"}
	}
	if v.keys != nil {
		claims, err := v.keys.VerifyCheckpoint(ck.Signature)
		if err != nil {
			return &Break{Partition: r.Partition, Seq: h.seq, Offset: r.Offset, Kind: KindSignature,
				Detail: "the checkpoint signature does not verify: " + err.Error()}
		}
		if !claims.Matches(r.Partition, ev.Time, ck) {
			return &Break{Partition: r.Partition, Seq: h.seq, Offset: r.Offset, Kind: KindSignature,
				Expected: fmt.Sprintf("partition %d seq %d head %s at %d", r.Partition, ck.Seq, ck.Head, ev.Time.Unix()),
				Found:    fmt.Sprintf("partition %d seq %d head %s at %d", claims.Partition, claims.Seq, claims.Head, claims.IssuedAt),
				Detail:   "the signature is valid but signs another checkpoint"}
		}
	}
	next := ck.Next
	c.policy = &next
	c.dueSeq, c.rep.Uncovered = 0, 0
	c.rep.Checkpoints++
	c.rep.LastCheckpoint = h.seq
	return nil
}
