package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"

	"github.com/agentgate/agentgate/handlers/audit"
	"github.com/agentgate/agentgate/streams"
)

// BundleFormat names the layout of the JSON export.
const BundleFormat = "agentgate.compliance-bundle.v1"

// Bundle is the JSON export: the report, the chain segment it was built
// from (each event as the exact bytes the log stores, as a JSON string),
// and the JWKS that verifies the segment's checkpoints and attestations.
type Bundle struct {
	Format string          `json:"format"`
	Chain  Chain           `json:"chain"`
	Report *Report         `json:"report"`
	JWKS   json.RawMessage `json:"jwks"`
}

// Chain is a contiguous segment of one partition's chain.
type Chain struct {
	Partition int32 `json:"partition"`
	// Events are the payloads, in log order, from FirstSeq to LastSeq.
	Events   []string `json:"events"`
	FirstSeq uint64   `json:"first_seq"`
	LastSeq  uint64   `json:"last_seq"`
}

// WriteBundle builds the report of opts from log and writes the bundle to
// w as it reads (the segment is never held in memory). jwks is the key
// set of the gate's signing keys.
func WriteBundle(ctx context.Context, w io.Writer, log streams.Log, opts Options, jwks []byte) (*Report, error) {
	var keys bytes.Buffer
	if err := json.Compact(&keys, jwks); err != nil {
		return nil, fmt.Errorf("reading the JWKS: %w", err)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, "{\"format\":%q,\n\"chain\":{\"partition\":%d,\"events\":[", BundleFormat, opts.Partition)
	var first, last uint64
	n := 0
	seg := func(r streams.Record) error {
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n")
		writeJSONString(bw, r.Payload)
		if n == 0 {
			first = r.Seq
		}
		last = r.Seq
		n++
		return nil
	}
	rep, err := Build(ctx, log, opts, seg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(bw, "\n],\"first_seq\":%d,\"last_seq\":%d},\n\"report\":", first, last)
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return nil, fmt.Errorf("encoding report: %w", err)
	}
	bw.Write(b)
	bw.WriteString(",\n\"jwks\":")
	bw.Write(keys.Bytes())
	bw.WriteString("}\n")
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("writing bundle: %w", err)
	}
	return rep, nil
}

// VerifyOptions tune VerifyBundle.
type VerifyOptions struct {
	// JWKS, when set, replaces the bundled key set: keys obtained from
	// the operator by another channel, so that a bundle whose JWKS was
	// swapped together with re-signed checkpoints does not verify.
	JWKS []byte
	// SkipSignatures checks the chain and the report but no signature.
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
	// Chain is the chain verifier's report on the segment (nil when the
	// bundle could not be read).
	Chain *audit.Report `json:"chain"`
	// Problems lists every way the report does not match the segment (or
	// the segment does not cover the report); empty when it does.
	Problems []string `json:"problems"`
	// NotRechecked names the report members that depend on events before
	// the segment (when it starts after the agent's registration), which
	// the bundle cannot recompute.
	NotRechecked []string `json:"not_rechecked"`
	// Signed is the last seq a verified checkpoint in the segment covers
	// (0: none); Unsigned counts the events after it.
	Signed   uint64 `json:"signed_through_seq"`
	Unsigned int64  `json:"unsigned_events"`
}

// OK reports whether the bundle verified: an intact chain and a report
// that matches it.
func (c *BundleCheck) OK() bool { return c.Chain != nil && c.Chain.OK() && len(c.Problems) == 0 }

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

// VerifyBundle checks a bundle offline: the segment is an unbroken chain
// whose checkpoint signatures and attestations verify against the
// bundled JWKS (audit.Verify, the first record's prev taken on trust);
// the segment covers the period (it starts before it, or at seq 1) up to
// the report's position; and the report is what the segment says:
// rebuilt from the segment's events, its summary, days (decisions, cost,
// tokens), exceptions, attestations, position and checkpoint are equal.
// The error is for a bundle that cannot be read.
func VerifyBundle(ctx context.Context, b *Bundle, opts VerifyOptions) (*BundleCheck, error) {
	chk := &BundleCheck{Problems: []string{}, NotRechecked: []string{}}
	payloads := make([][]byte, len(b.Chain.Events))
	for i, e := range b.Chain.Events {
		payloads[i] = []byte(e)
	}
	jwks := []byte(b.JWKS)
	if opts.JWKS != nil {
		jwks = opts.JWKS
	}
	ar, err := audit.Verify(ctx, audit.Payloads(b.Chain.Partition, payloads), jwks,
		audit.Options{Partial: true, SkipSignatures: opts.SkipSignatures})
	if err != nil {
		return nil, fmt.Errorf("verifying the chain segment: %w", err)
	}
	chk.Chain = ar
	if !ar.OK() {
		return chk, nil
	}
	problem := func(format string, args ...any) { chk.Problems = append(chk.Problems, fmt.Sprintf(format, args...)) }
	if len(payloads) == 0 {
		problem("the chain segment is empty")
		return chk, nil
	}
	if len(ar.Partitions) == 1 {
		pr := ar.Partitions[0]
		if pr.FirstSeq != b.Chain.FirstSeq || pr.LastSeq != b.Chain.LastSeq {
			problem("the segment holds seq %d to %d, it says %d to %d", pr.FirstSeq, pr.LastSeq, b.Chain.FirstSeq, b.Chain.LastSeq)
		}
		if pr.LastCheckpoint > 0 {
			chk.Signed = pr.LastCheckpoint - 1
		}
		chk.Unsigned = pr.Uncovered
	}
	rep := b.Report
	log := &segmentLog{partition: b.Chain.Partition}
	for i, p := range payloads {
		log.recs = append(log.recs, streams.Record{Seq: b.Chain.FirstSeq + uint64(i), Payload: p})
	}
	// Coverage: the first event is before the period (or the log's
	// first), so no event of the period precedes the segment.
	if t, err := eventTime(payloads[0]); err != nil || (b.Chain.FirstSeq > 1 && !t.Before(rep.Period.From)) {
		problem("the segment starts at seq %d, inside the period: earlier events of the period are missing", b.Chain.FirstSeq)
	}
	bo := Options{AgentID: rep.Agent.AgentID, From: rep.Period.From, To: rep.Period.To, Partition: b.Chain.Partition}
	again, err := build(ctx, log, bo, nil, true)
	if err != nil {
		problem("rebuilding the report from the segment: %v", err)
		return chk, nil
	}
	if again.ProducedAt.Seq != rep.ProducedAt.Seq || again.ProducedAt.Hash != rep.ProducedAt.Hash {
		problem("the report says it was produced at seq %d (%s); the segment reaches seq %d (%s)",
			rep.ProducedAt.Seq, rep.ProducedAt.Hash, again.ProducedAt.Seq, again.ProducedAt.Hash)
	}
	same := func(name string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			problem("%s: the report says %s, the segment says %s", name, ja, jb)
		}
	}
	same("produced_at.checkpoint", rep.ProducedAt.Checkpoint, again.ProducedAt.Checkpoint)
	same("produced_at.time", rep.ProducedAt.Time, again.ProducedAt.Time)
	same("summary", rep.Summary, again.Summary)
	same("exceptions", rep.Exceptions, again.Exceptions)
	same("attestations", rep.Attestations, again.Attestations)
	if len(rep.Days) != len(again.Days) {
		problem("days: the report has %d, the segment %d", len(rep.Days), len(again.Days))
	} else {
		for i := range rep.Days {
			same("days["+strconv.Itoa(i)+"]", dayFigures(rep.Days[i]), dayFigures(again.Days[i]))
		}
	}
	if again.Agent.DID != "" {
		// The segment holds the registration: everything is recomputed.
		same("agent", rep.Agent, again.Agent)
		same("trust_level_at_start", rep.TrustAtStart, again.TrustAtStart)
		same("trust_history", rep.Trust, again.Trust)
		same("budget_limits", rep.Limits, again.Limits)
		for i := range min(len(rep.Days), len(again.Days)) {
			same("days["+strconv.Itoa(i)+"].budget", rep.Days[i].Budget, again.Days[i].Budget)
		}
	} else {
		chk.NotRechecked = []string{"agent", "trust_level_at_start", "trust_history", "budget_limits", "days[].budget"}
	}
	return chk, nil
}

// dayFigures is what a segment says about a day: everything but the
// budget usage, which depends on the usage before it.
func dayFigures(d Day) Day {
	d.Budget = BudgetDay{}
	return d
}

// segmentLog is a read-only streams.Log over a bundle's segment.
type segmentLog struct {
	partition int32
	recs      []streams.Record
}

func (l *segmentLog) Append(context.Context, []streams.Record) error {
	return errors.New("a bundle's segment is read-only")
}

func (l *segmentLog) Head() streams.Head {
	if len(l.recs) == 0 {
		return streams.Head{}
	}
	r := l.recs[len(l.recs)-1]
	return streams.Head{Seq: r.Seq, Hash: r.Hash()}
}

func (l *segmentLog) Read(ctx context.Context, from uint64, fn func(streams.Record) error) error {
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

func (l *segmentLog) Close() error { return nil }
