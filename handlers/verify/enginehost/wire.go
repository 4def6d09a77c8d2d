package enginehost

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
)

// Protocol is the hello a worker sends first; a host refuses a worker
// that sends anything else (a binary of another version, or one that
// does not know the engine-worker command).
const Protocol = "agentgate-engine-worker/1"

// MaxFrameBytes bounds one frame of the protocol (a request holds at most
// a 100000-byte query and its params; an answer at most the engine's
// bounded findings).
const MaxFrameBytes = 8 << 20

// WatchdogGrace is how long past a request's deadline a worker lets an
// engine run before it exits by itself: the host kills it at the
// deadline, and a worker whose host is gone must not run on.
const WatchdogGrace = 2 * time.Second

// hello is the worker's first frame: the protocol and the engines it
// serves.
type hello struct {
	Protocol string   `json:"protocol"`
	Engines  []string `json:"engines"`
}

// request is one engine call.
type request struct {
	ID           uint64          `json:"id"`
	Engine       string          `json:"engine"`
	Query        string          `json:"query"`
	Params       json.RawMessage `json:"params,omitempty"`
	IncludeProof bool            `json:"include_proof,omitempty"`
	// DeadlineMS is the host's deadline for the call: the worker's
	// watchdog exits WatchdogGrace past it.
	DeadlineMS int64 `json:"deadline_ms"`
}

// answer is an engines.Outcome on the wire: the result and the proof as
// the engine's own JSON, the details of its problem member by member, so
// that the host renders exactly the bytes the engine would have given in
// process.
type answer struct {
	ID        uint64            `json:"id"`
	Status    engines.Status    `json:"status"`
	Result    json.RawMessage   `json:"result,omitempty"`
	Proof     json.RawMessage   `json:"proof,omitempty"`
	Corrected string            `json:"corrected,omitempty"`
	Findings  []engines.Finding `json:"findings"` // null and [] kept apart
	Err       *problem          `json:"err,omitempty"`
}

type problem struct {
	Code    string                     `json:"code"`
	Message string                     `json:"message"`
	Details map[string]json.RawMessage `json:"details,omitempty"`
}

// writeFrame writes v as one frame: its JSON length (4 bytes, big
// endian), then the JSON.
func writeFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding a frame: %w", err)
	}
	if len(b) > MaxFrameBytes {
		return fmt.Errorf("encoding a frame: %d bytes, more than %d", len(b), MaxFrameBytes)
	}
	buf := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	if _, err := w.Write(append(buf, b...)); err != nil {
		return fmt.Errorf("writing a frame: %w", err)
	}
	return nil
}

// readFrame reads one frame into v; io.EOF when the stream ends before
// a frame starts.
func readFrame(r io.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("reading a frame's length: %w", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > MaxFrameBytes {
		return fmt.Errorf("reading a frame: %d bytes, more than %d", size, MaxFrameBytes)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("reading a frame of %d bytes: %w", size, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding a frame: %w", err)
	}
	return nil
}

// toWire encodes an outcome for the host.
func toWire(id uint64, o engines.Outcome) answer {
	a := answer{ID: id, Status: o.Status, Corrected: o.Corrected, Findings: o.Findings}
	fail := func(what string, err error) answer {
		return answer{ID: id, Status: engines.Error, Err: &problem{Code: string(domain.CodeEngineFailed),
			Message: "the engine's " + what + " cannot be encoded: " + err.Error()}}
	}
	var err error
	if o.Result != nil {
		if a.Result, err = json.Marshal(o.Result); err != nil {
			return fail("result", err)
		}
	}
	if o.Proof != nil {
		if a.Proof, err = json.Marshal(o.Proof); err != nil {
			return fail("proof", err)
		}
	}
	if o.Err != nil {
		a.Err = &problem{Code: o.Err.Code, Message: o.Err.Message}
		if len(o.Err.Details) > 0 {
			a.Err.Details = make(map[string]json.RawMessage, len(o.Err.Details))
			for k, v := range o.Err.Details {
				if a.Err.Details[k], err = json.Marshal(v); err != nil {
					return fail("error details", err)
				}
			}
		}
	}
	return a
}

// outcome decodes an answer: the result, the proof and each detail stay
// JSON (json.RawMessage encodes as itself).
func (a *answer) outcome() engines.Outcome {
	o := engines.Outcome{Status: a.Status, Corrected: a.Corrected, Findings: a.Findings}
	if len(a.Result) > 0 {
		o.Result = a.Result
	}
	if len(a.Proof) > 0 {
		o.Proof = a.Proof
	}
	if a.Err != nil {
		o.Err = &engines.Problem{Code: a.Err.Code, Message: a.Err.Message}
		if len(a.Err.Details) > 0 {
			o.Err.Details = make(map[string]any, len(a.Err.Details))
			for k, v := range a.Err.Details {
				o.Err.Details[k] = v
			}
		}
	}
	return o
}

// Serve is the worker's side of the protocol (the hidden `agentgate
// engine-worker` command): it sends the hello, then answers the requests
// read from r, one at a time, on w, until r ends (nil) or a frame cannot
// be read or written (the error). A request for an engine it does not
// serve, or a panic, is an ERROR answer (QWED-ENG-002); an engine still
// running WatchdogGrace past the request's deadline ends the process
// (exit status 3). es must be safe to call one request at a time.
func Serve(r io.Reader, w io.Writer, es ...engines.Engine) error {
	byID := make(map[string]engines.Engine, len(es))
	h := hello{Protocol: Protocol}
	for _, e := range es {
		id := e.Capabilities().EngineID
		byID[id] = e
		h.Engines = append(h.Engines, id)
	}
	bw := bufio.NewWriter(w)
	flush := func(v any) error {
		if err := writeFrame(bw, v); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("writing a frame: %w", err)
		}
		return nil
	}
	if err := flush(h); err != nil {
		return err
	}
	br := bufio.NewReader(r)
	for {
		var req request
		if err := readFrame(br, &req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := flush(toWire(req.ID, serveOne(byID, &req))); err != nil {
			return err
		}
	}
}

// serveOne runs one request under the watchdog.
func serveOne(byID map[string]engines.Engine, req *request) (out engines.Outcome) {
	e, ok := byID[req.Engine]
	if !ok {
		return failed("this engine worker does not serve the engine %q", req.Engine)
	}
	watchdog := time.AfterFunc(time.Duration(req.DeadlineMS)*time.Millisecond+WatchdogGrace, func() {
		fmt.Fprintf(os.Stderr, "engine worker: the %s engine ran past its deadline of %d ms; exiting\n", req.Engine, req.DeadlineMS)
		os.Exit(3)
	})
	defer watchdog.Stop()
	defer func() {
		if r := recover(); r != nil {
			out = failed("the %s engine failed", req.Engine)
		}
	}()
	return e.Verify(context.Background(), engines.Request{Query: req.Query, Type: req.Engine, Params: req.Params, IncludeProof: req.IncludeProof})
}

// failed is an ERROR outcome with QWED-ENG-002.
// initFailed is an ERROR outcome with QWED-ENG-001 (QWED protocol v1.0
// §8.3, engine initialization failed): the engine could not be brought up
// to run the call (details.reason says what failed).
func initFailed(reason, why string) engines.Outcome {
	return engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: string(domain.CodeEngineInit),
		Message: "Engine initialization failed: " + why, Details: map[string]any{"reason": reason}}}
}

func failed(format string, args ...any) engines.Outcome {
	return engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: string(domain.CodeEngineFailed),
		Message: "Verification failed unexpectedly: " + fmt.Sprintf(format, args...)}}
}
