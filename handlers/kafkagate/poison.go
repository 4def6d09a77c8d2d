package kafkagate

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// MaxAttempts is how many times the processing of one request may kill
// the gate process before the request is dead-lettered undecided (issue
// 11, "Poison pills on Kafka"). The death that first exposes a poison
// request (its batch in flight) counts as its first attempt; it is then
// retried alone.
const MaxAttempts = 3

// flightFile is the name of a partition's flight record, beside its state.
const flightFile = "flight"

// The flight record: little-endian int64 fields at fixed offsets of a
// 64-byte file mapped into memory (flightMap). A store into the mapping is
// a store into the kernel's page cache: it survives the death of the
// process (SIGKILL, SIGSEGV, os.Exit), which is the failure it records,
// and costs no system call on the request path. A machine crash may lose
// it; then one attempt goes uncounted or one isolation is spared, both
// bounded.
const (
	fMagic   = iota * 8 // flightMagic: the record is initialised
	fFetched            // the last request offset handed to processing
	fWritten            // the last request offset answered and written
	fClean              // 1 when the partition was released without dying
	fIsoLo              // the isolation window: offsets retried one at a time
	fIsoHi              // (-1: none)
	fCur                // the offset being tried alone (-1: none)
	fDeaths             // process deaths with fCur in flight
	flightSize
)

const flightMagic = 0x616774666c743031 // "agtflt01"

// flight is a partition's flight record (one per owned partition; written
// by the partition's reading goroutine, fWritten by its completing one).
type flight struct {
	f   *os.File
	mem []byte
}

func (fl *flight) get(off int) int64 { return int64(binary.LittleEndian.Uint64(fl.mem[off:])) }

func (fl *flight) set(off int, v int64) { binary.LittleEndian.PutUint64(fl.mem[off:], uint64(v)) }

// openFlight opens the flight record in dir and plans the partition's
// restart from committed, the group's committed offset (-1 for none).
// When the last owner died (no clean release) with requests in flight
// beyond what it answered, those requests form the isolation window: each
// is retried alone, and one whose deaths reach MaxAttempts is
// dead-lettered. A window left by an earlier run carries on, the request
// that was being tried alone counting one more death.
func openFlight(dir string, committed int64) (*flight, error) {
	f, err := os.OpenFile(filepath.Join(dir, flightFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the flight record: %w", err)
	}
	if err := f.Truncate(flightSize); err != nil {
		f.Close()
		return nil, fmt.Errorf("sizing the flight record: %w", err)
	}
	mem, err := flightMap(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mapping the flight record: %w", err)
	}
	fl := &flight{f: f, mem: mem}
	if fl.get(fMagic) != flightMagic {
		for off := fFetched; off < flightSize; off += 8 {
			fl.set(off, -1)
		}
		fl.set(fClean, 1)
		fl.set(fMagic, flightMagic)
	}
	from := max(committed, 0)
	died := fl.get(fClean) != 1
	switch {
	case fl.get(fIsoHi) >= from:
		if died && fl.get(fCur) >= from {
			fl.set(fDeaths, fl.get(fDeaths)+1)
		}
		fl.set(fIsoLo, max(fl.get(fIsoLo), from))
	case died && fl.get(fFetched) > fl.get(fWritten) && fl.get(fFetched) >= from:
		fl.set(fIsoLo, max(from, fl.get(fWritten)+1))
		fl.set(fIsoHi, fl.get(fFetched))
		fl.set(fCur, -1)
		fl.set(fDeaths, 0)
	default:
		fl.set(fIsoLo, -1)
		fl.set(fIsoHi, -1)
	}
	if fl.get(fCur) < fl.get(fIsoLo) {
		fl.set(fCur, -1)
	}
	fl.set(fClean, 0)
	return fl, nil
}

// window returns the isolation window (hi < 0: none).
func (fl *flight) window() (lo, hi int64) { return fl.get(fIsoLo), fl.get(fIsoHi) }

// fetched records that the request at offset is handed to processing.
func (fl *flight) fetched(offset int64) { fl.set(fFetched, offset) }

// written records that every request up to offset is answered.
func (fl *flight) written(offset int64) { fl.set(fWritten, offset) }

// isolated reports whether the request at offset must be tried alone.
func (fl *flight) isolated(offset int64) bool {
	return offset <= fl.get(fIsoHi) && offset >= fl.get(fIsoLo)
}

// begin records that the request at offset is tried alone and returns its
// deaths so far (the death that opened the window is its first).
func (fl *flight) begin(offset int64) int64 {
	if fl.get(fCur) != offset {
		fl.set(fDeaths, 1)
		fl.set(fCur, offset)
	}
	return fl.get(fDeaths)
}

// end records that the request at offset, tried alone, was answered.
func (fl *flight) end(offset int64) {
	fl.set(fCur, -1)
	if offset >= fl.get(fIsoHi) {
		fl.set(fIsoLo, -1)
		fl.set(fIsoHi, -1)
	} else {
		fl.set(fIsoLo, offset+1)
	}
}

// close records a clean release (clean: the process did not die) and
// unmaps the record.
func (fl *flight) close(clean bool) {
	if clean {
		fl.set(fClean, 1)
	}
	_ = flightUnmap(fl.mem)
	_ = fl.f.Close()
}

// isolate processes msg alone (it is in the isolation window): it waits
// until its answer is written before the next request is read, and no
// other partition of the process tries a request alone meanwhile, so that
// a death is charged to it alone; past MaxAttempts deaths it is
// dead-lettered undecided instead. It returns false when the generation
// ended before msg was answered.
func (g *Gate) isolate(ctx context.Context, pr *partition, msg kafka.Message, items chan<- *item) bool {
	select {
	case g.alone <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	release := func() { <-g.alone }
	deaths := pr.flight.begin(msg.Offset)
	var it *item
	if deaths >= MaxAttempts {
		it = g.poisoned(ctx, pr, msg, deaths)
	} else {
		g.log.Warn("retrying alone a request that was in flight when the gate died", "partition", pr.id, "offset", msg.Offset, "attempt", deaths+1)
		it = g.handle(ctx, pr, msg)
	}
	it.sync = make(chan struct{})
	items <- it
	select {
	case <-it.sync:
	case <-ctx.Done():
		release()
		return false
	}
	if !it.flushed {
		// The partition answers nothing more in this generation (as when
		// a batch is not answered): its next owner goes on.
		release()
		<-ctx.Done()
		return false
	}
	pr.flight.end(msg.Offset)
	release()
	return true
}

// poisoned is the item of a request whose processing killed the gate
// deaths times: never decided, dead-lettered with the reason, answered
// with QWED-SYS-001 when it asked for a reply, and audited as a refusal.
func (g *Gate) poisoned(ctx context.Context, pr *partition, msg kafka.Message, deaths int64) *item {
	it := &item{msg: msg}
	it.dead = fmt.Sprintf("processing this request killed the gate %d times (bound %d): dead-lettered undecided", deaths, MaxAttempts)
	g.log.Error("dead-lettering a poison request", "partition", pr.id, "offset", msg.Offset, "deaths", deaths)
	it.rej = command.Reject(domain.CodeInternal, map[string]any{"attempts": deaths, "bound": MaxAttempts}, "%s", it.dead)
	if ev, ok := decodeEnvelope(msg); ok {
		// Its reply goes where it asked, in its mode.
		it.req, it.decoded = ev, true
	}
	it.pend = g.audit(ctx, pr, it, "")
	return it
}

// decodeEnvelope decodes msg's CloudEvent, recovering from a panic (the
// request is a known poison: no part of its processing is trusted).
func decodeEnvelope(msg kafka.Message) (ev ce.Event, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	ev, err := cekafka.Decode(msg)
	return ev, err == nil
}
