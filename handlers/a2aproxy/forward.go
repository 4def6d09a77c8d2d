package a2aproxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Limits of the memory of forwards.
const (
	// MaxRemembered bounds the forwards remembered (their answers replayed
	// to a retry of the same messageId); the oldest is forgotten first.
	MaxRemembered = 4096
	// MaxRememberedBytes bounds the bytes of the answers remembered.
	MaxRememberedBytes = 64 << 20
	// MaxStreamBytes bounds the bytes of one forwarded stream.
	MaxStreamBytes = 16 << 20
)

// memoState is what became of a forward.
type memoState int

const (
	// The zero state: the forward is in flight.
	_ memoState = iota
	// answered: the upstream answered; the answer is replayed to a retry.
	answered
	// undelivered: the request never reached the upstream (no connection):
	// a retry may forward it. Such a forward is not remembered.
	undelivered
	// unknown: the request was sent but no whole answer came back (the
	// deadline, a cut connection, an answer out of bounds): the upstream
	// may have acted on it, so it is never sent again.
	unknown
	// streamed: the upstream's stream was relayed; a stream is not replayed.
	streamed
)

// memoEntry is one forward of a messageId.
type memoEntry struct {
	done        chan struct{}
	state       memoState
	status      int
	contentType string
	body        []byte
	fail        *rpcError // the error answered when the forward failed
	failStatus  int
}

// memo remembers forwards by (upstream, messageId, credentials), so that a
// message is forwarded at most once while it is remembered.
type memo struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*memoEntry
	order   [][sha256.Size]byte // finished entries, oldest first
	bytes   int
}

func newMemo() *memo { return &memo{entries: map[[sha256.Size]byte]*memoEntry{}} }

// memoKey names a forward: the upstream, the messageId and the caller's
// credentials (one tenant's messageId never answers another's retry).
func memoKey(name, messageID string, creds http.Header) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{name, messageID, strings.Join(creds.Values("X-Api-Key"), ","), strings.Join(creds.Values("Authorization"), ",")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// begin returns the entry of key and whether the caller leads it (the
// entry is new: the caller forwards and finishes it).
func (m *memo) begin(key [sha256.Size]byte) (*memoEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[key]; ok {
		return e, false
	}
	e := &memoEntry{done: make(chan struct{})}
	m.entries[key] = e
	return e, true
}

// finish records the outcome of the entry the caller leads and wakes its
// waiters; an undelivered forward is forgotten, others are remembered
// within MaxRemembered and MaxRememberedBytes.
func (m *memo) finish(key [sha256.Size]byte, e *memoEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(e.done)
	if e.state == undelivered {
		delete(m.entries, key)
		return
	}
	m.order = append(m.order, key)
	m.bytes += len(e.body)
	for len(m.order) > MaxRemembered || (m.bytes > MaxRememberedBytes && len(m.order) > 1) {
		old := m.order[0]
		m.order = m.order[1:]
		if oe := m.entries[old]; oe != nil {
			m.bytes -= len(oe.body)
			delete(m.entries, old)
		}
	}
}

// forward forwards a message whose parts were all forwarded by the gate,
// or answers a retry of it from memory. A SendMessage's answer is read
// whole within Timeout; a SendStreamingMessage answered with a stream is
// relayed (relayStream), any other answer is handled as SendMessage's.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, u *upstream, req *request, key [sha256.Size]byte, body []byte) {
	e, leader := p.memo.begin(key)
	if !leader {
		p.replay(w, r, req, e)
		return
	}
	start := time.Now()
	accept, d := "application/json", p.cfg.Timeout
	if req.Stream {
		accept, d = "text/event-stream", p.cfg.StreamTimeout
	}
	// The answer may take longer than the server's write timeout allows.
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(d + 5*time.Second))
	resp, wrote, err := p.post(r, u, body, accept, d)
	if err == nil {
		defer resp.Body.Close()
		if req.Stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			e.state = streamed
			p.memo.finish(key, e)
			// A stream is never replayed, so nothing waits on its end: a
			// caller that leaves ends the forward at once rather than at
			// StreamTimeout.
			if cb, ok := resp.Body.(*cancelBody); ok {
				defer context.AfterFunc(r.Context(), cb.cancel)()
			}
			p.relayStream(w, rc, u, req, resp, start)
			return
		}
		e.body, err = readBounded(resp.Body, p.cfg.MaxResponseBytes)
		e.status, e.contentType = resp.StatusCode, resp.Header.Get("Content-Type")
	}
	p.settle(e, wrote, err)
	p.memo.finish(key, e)
	p.logForward(u, req, e, time.Since(start), err)
	p.answer(w, req, e)
}

// settle sets the state of a finished forward and, when it failed, its
// error.
func (p *Proxy) settle(e *memoEntry, wrote bool, err error) {
	switch {
	case err == nil:
		e.state = answered
		return
	case !wrote:
		e.state = undelivered
	default:
		e.state = unknown
		e.body = nil
	}
	code, status := domain.CodeUnavailable, http.StatusBadGateway
	msg := "the upstream agent cannot be reached: nothing was delivered; retry"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		code, status = domain.CodeTimeout, http.StatusGatewayTimeout
		msg = "the upstream agent did not answer in time"
	case errors.Is(err, errTooLarge):
		msg = "the upstream agent's answer is out of bounds"
	case wrote:
		msg = "the upstream agent's answer was cut"
	}
	if e.state == unknown {
		msg += ": it may have acted on the message, which is not forwarded again"
	}
	e.fail, e.failStatus = upstreamError(code, "%s", msg), status
}

// replay answers a retry of a forward from its entry, once it is finished.
func (p *Proxy) replay(w http.ResponseWriter, r *http.Request, req *request, e *memoEntry) {
	select {
	case <-e.done:
	case <-r.Context().Done():
		return
	}
	switch e.state {
	case unknown:
		writeRPCError(w, http.StatusBadGateway, req.ID, upstreamError(domain.CodeUnavailable,
			"message %s was sent to the upstream agent and its outcome is unknown: it is not forwarded again", truncate(req.MessageID, 64)))
	case streamed:
		writeRPCError(w, http.StatusConflict, req.ID, upstreamError(domain.CodeConflict,
			"message %s was already streamed from the upstream agent: a stream is not forwarded again", truncate(req.MessageID, 64)))
	default:
		p.answer(w, req, e)
	}
}

// answer writes a finished entry: the upstream's answer as received (its
// id set to this request's when a retry used another), or the error.
func (p *Proxy) answer(w http.ResponseWriter, req *request, e *memoEntry) {
	if e.fail != nil {
		writeRPCError(w, e.failStatus, req.ID, e.fail)
		return
	}
	body := withID(e.body, req.ID)
	if e.contentType != "" {
		w.Header().Set("Content-Type", e.contentType)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}

// withID returns a JSON-RPC answer with its id set to id, the answer as is
// when it already has that id or is not a JSON-RPC object.
func withID(body []byte, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return body
	}
	if old, ok := m["id"]; !ok || bytes.Equal(bytes.TrimSpace(old), id) {
		return body
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return b
}

var errTooLarge = errors.New("larger than the limit")

// readBounded reads at most max bytes of r.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading the upstream's answer: %w", err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("reading the upstream's answer: %w (%d bytes)", errTooLarge, max)
	}
	return b, nil
}

// post sends body to the upstream's JSON-RPC endpoint with the caller's
// A2A headers (never its credentials), bounded by d from now whatever the
// caller does meanwhile (the outcome must be known). wrote says whether
// the request was written (the upstream may have acted on it). The
// response's body is read within the same deadline.
func (p *Proxy) post(r *http.Request, u *upstream, body []byte, accept string, d time.Duration) (*http.Response, bool, error) {
	var wrote atomic.Bool
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), d)
	c, err := u.get(ctx, p)
	if err != nil {
		cancel()
		return nil, false, fmt.Errorf("reading the upstream's card: %w", err)
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
	})
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, false, fmt.Errorf("building the forward: %w", err)
	}
	out.Header.Set("Content-Type", "application/json")
	out.Header.Set("Accept", accept)
	for _, k := range []string{"A2A-Version", "A2A-Extensions"} {
		if v := r.Header.Values(k); len(v) > 0 {
			out.Header[k] = v
		}
	}
	resp, err := p.client.Do(out)
	if err != nil {
		cancel()
		return nil, wrote.Load(), fmt.Errorf("forwarding to %s: %w", u.Name, err)
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, true, nil
}

// cancelBody releases the forward's context when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// relayStream relays the upstream's stream as it comes, within
// StreamTimeout and MaxStreamBytes; a stream cut short ends with one last
// event carrying a CodeUpstream error. A retry of a streamed message is
// refused (streams are not replayed).
func (p *Proxy) relayStream(w http.ResponseWriter, rc *http.ResponseController, u *upstream, req *request, resp *http.Response, start time.Time) {
	h := w.Header()
	h.Set("Content-Type", resp.Header.Get("Content-Type"))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(resp.StatusCode)
	_ = rc.Flush()
	n, err := relay(w, rc, resp.Body, MaxStreamBytes)
	if err != nil {
		// The stream is cut: say so in its own terms, one last event.
		e := upstreamError(domain.CodeUnavailable, "the upstream agent's stream was cut after %d bytes: %v", n, err)
		if errors.Is(err, context.DeadlineExceeded) {
			e = upstreamError(domain.CodeTimeout, "the upstream agent's stream did not end within %s", p.cfg.StreamTimeout)
		}
		_, _ = fmt.Fprintf(w, "data: %s\n\n", errorResponse(req.ID, e))
		_ = rc.Flush()
	}
	p.log.Info("a2a proxy streamed", "upstream", u.Name, "message_id", req.MessageID, "status", resp.StatusCode,
		"bytes", n, "ms", time.Since(start).Milliseconds(), "err", errString(err))
}

// relay copies a stream to w, flushing each read, at most max bytes.
func relay(w io.Writer, rc *http.ResponseController, r io.Reader, max int64) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if n+int64(k) > max {
				return n, fmt.Errorf("the stream is larger than %d bytes", max)
			}
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, fmt.Errorf("writing to the caller: %w", werr)
			}
			n += int64(k)
			_ = rc.Flush()
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// logForward logs the outcome of a forward (the verdicts are in the log;
// what the upstream did with the message is here).
func (p *Proxy) logForward(u *upstream, req *request, e *memoEntry, d time.Duration, err error) {
	if err == nil {
		p.log.Info("a2a proxy forwarded", "upstream", u.Name, "method", req.Method, "message_id", req.MessageID,
			"status", e.status, "bytes", len(e.body), "ms", d.Milliseconds())
		return
	}
	outcome := map[memoState]string{undelivered: "undelivered", unknown: "unknown"}[e.state]
	p.log.Warn("a2a proxy forward failed", "upstream", u.Name, "method", req.Method, "message_id", req.MessageID,
		"outcome", outcome, "ms", d.Milliseconds(), "err", err)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
