package attest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFetchJWKS pins FetchJWKS on a file and on a real HTTP server: the
// document is returned as served; missing files, non-200 answers, invalid
// or oversized documents and cancelled contexts are errors.
func TestFetchJWKS(t *testing.T) {
	kr := fixedRing(t)
	jwks := kr.JWKS()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	oversized := append(bytes.TrimSuffix(jwks, []byte("}")), []byte(`,"pad":"`+strings.Repeat("x", MaxJWKSBytes)+`"}`)...)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(oversized) })
	mux.HandleFunc("/bad", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"keys":[]}`)) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux) // a real socket on 127.0.0.1
	defer srv.Close()

	ctx := context.Background()
	for _, src := range []string{path, srv.URL + "/.well-known/jwks.json"} {
		got, err := FetchJWKS(ctx, src)
		if err != nil {
			t.Fatalf("FetchJWKS(%s): %v", src, err)
		}
		if !bytes.Equal(got, jwks) {
			t.Fatalf("FetchJWKS(%s) = %s", src, got)
		}
		tok, err := kr.Signer("node-1").Sign(typicalClaims())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(tok, got); err != nil {
			t.Fatalf("verifying with JWKS from %s: %v", src, err)
		}
	}

	bigPath := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(bigPath, oversized, 0o600); err != nil {
		t.Fatal(err)
	}
	failures := map[string]string{
		"missing file":   filepath.Join(t.TempDir(), "absent.json"),
		"oversized file": bigPath,
		"not found":      srv.URL + "/absent",
		"oversized body": srv.URL + "/big",
		"no usable key":  srv.URL + "/bad",
	}
	for name, src := range failures {
		if got, err := FetchJWKS(ctx, src); err == nil {
			t.Errorf("%s: FetchJWKS(%s) = %d bytes, want an error", name, src, len(got))
		}
	}
	for _, src := range []string{bigPath, srv.URL + "/big"} {
		if _, err := FetchJWKS(ctx, src); !errors.Is(err, ErrInvalidJWKS) {
			t.Errorf("FetchJWKS(%s) = %v, want ErrInvalidJWKS", src, err)
		}
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := FetchJWKS(short, srv.URL+"/slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow server: %v, want a deadline error", err)
	}
	done, cancelDone := context.WithCancel(ctx)
	cancelDone()
	if _, err := FetchJWKS(done, path); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled file read: %v", err)
	}
}
