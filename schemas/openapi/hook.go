package openapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// exercised are the operations some hooked test request reached, in this
// test binary (Exercised).
var (
	exercisedMu sync.Mutex
	exercised   = map[string]bool{}
)

// Exercised returns the operations ("METHOD /path") that requests served
// by a Hook reached so far in this process, sorted.
func Exercised() []string {
	exercisedMu.Lock()
	defer exercisedMu.Unlock()
	out := make([]string, 0, len(exercised))
	for op := range exercised {
		out = append(out, op)
	}
	slices.Sort(out)
	return out
}

// TB is the part of testing.TB that Hook uses (the package does not
// import testing: the binary links it for serve's check).
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// benchmark is what a *testing.B has and a *testing.T has not.
type benchmark interface{ ResetTimer() }

// Hook returns h checking every exchange it serves against the committed
// OpenAPI document (Default): at the end of t (t.Cleanup, which runs after
// the cleanups registered later, such as the server's Close), t fails with
// every exchange the document does not describe, and how to fix it.
// Benchmarks (*testing.B) get h itself: the check is not measured.
func Hook(t TB, h http.Handler) http.Handler {
	t.Helper()
	if _, bench := t.(benchmark); bench {
		return h
	}
	v, err := Default()
	if err != nil {
		t.Fatalf("openapi: %v", err)
	}
	var (
		mu         sync.Mutex
		violations []string
	)
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(violations) == 0 {
			return
		}
		const most = 20
		list := violations
		if len(list) > most {
			list = append(slices.Clip(list[:most]), fmt.Sprintf("… and %d more", len(violations)-most))
		}
		t.Errorf("openapi: %d exchanges are not described by schemas/openapi.v1.json:\n  %s\n(%s)",
			len(violations), strings.Join(list, "\n  "), FixHint)
	})
	return Middleware(v, h, func(bad []string) {
		mu.Lock()
		violations = append(violations, bad...)
		mu.Unlock()
	})
}

// Middleware returns h checking every exchange it serves with v: report
// is called, after the answer is sent, with what v finds (never with an
// empty list). The operations reached are counted for Exercised. The
// request body is the part the handler read; a hijacked connection is
// not checked.
func Middleware(v *Validator, h http.Handler, report func(violations []string)) http.Handler {
	return &hook{v: v, next: h, report: report}
}

type hook struct {
	v      *Validator
	next   http.Handler
	report func([]string)
}

func (hk *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req bytes.Buffer
	if r.Body != nil {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &req), r.Body}
	}
	rec := &recorder{ResponseWriter: w}
	hk.next.ServeHTTP(rec, r)
	if rec.hijacked {
		return
	}
	x := &Exchange{Method: r.Method, URL: r.URL, Header: r.Header, Body: req.Bytes(),
		Status: rec.status(), RespHead: w.Header(), RespBody: rec.body.Bytes()}
	bad, op := hk.v.Check(x)
	if op != "" {
		exercisedMu.Lock()
		exercised[op] = true
		exercisedMu.Unlock()
	}
	if len(bad) > 0 {
		hk.report(bad)
	}
}

// recorder tees what a handler answers.
type recorder struct {
	http.ResponseWriter
	code     int
	body     bytes.Buffer
	hijacked bool
}

func (rc *recorder) status() int {
	if rc.code == 0 {
		return http.StatusOK
	}
	return rc.code
}

func (rc *recorder) WriteHeader(code int) {
	if rc.code == 0 {
		rc.code = code
	}
	rc.ResponseWriter.WriteHeader(code)
}

func (rc *recorder) Write(p []byte) (int, error) {
	if rc.code == 0 {
		rc.code = http.StatusOK
	}
	rc.body.Write(p)
	return rc.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the server's writer (write
// deadlines, flushes).
func (rc *recorder) Unwrap() http.ResponseWriter { return rc.ResponseWriter }

// Flush implements http.Flusher.
func (rc *recorder) Flush() {
	if f, ok := rc.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack implements http.Hijacker; a hijacked exchange is not checked.
func (rc *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := rc.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	rc.hijacked = true
	return hj.Hijack()
}
