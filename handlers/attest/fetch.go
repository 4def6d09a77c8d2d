package attest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// FetchTimeout bounds an HTTP fetch of a JWKS (the context may end it
// sooner).
const FetchTimeout = 10 * time.Second

var fetchClient = &http.Client{Timeout: FetchTimeout}

// FetchJWKS reads a JWKS document from an http:// or https:// URL (GET,
// status 200 required) or, for anything else, from a file path. The
// document must not exceed MaxJWKSBytes and must parse with ParseJWKS; the
// raw bytes are returned for Verify.
func FetchJWKS(ctx context.Context, urlOrPath string) ([]byte, error) {
	var (
		data []byte
		err  error
	)
	lower := strings.ToLower(urlOrPath)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		data, err = fetchHTTP(ctx, urlOrPath)
	} else {
		data, err = readFile(ctx, urlOrPath)
	}
	if err != nil {
		return nil, err
	}
	if _, err := ParseJWKS(data); err != nil {
		return nil, fmt.Errorf("fetching JWKS from %s: %w", urlOrPath, err)
	}
	return data, nil
}

func fetchHTTP(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS: building request: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := fetchClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching JWKS from %s: HTTP status %s", url, resp.Status)
	}
	return readLimited(resp.Body, url)
}

func readFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading JWKS file: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading JWKS file: %w", err)
	}
	defer f.Close()
	return readLimited(f, path)
}

// readLimited reads at most MaxJWKSBytes from r, failing if there is more.
func readLimited(r io.Reader, source string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading JWKS from %s: %w", source, err)
	}
	if len(data) > MaxJWKSBytes {
		return nil, fmt.Errorf("reading JWKS from %s: %w: larger than %d bytes", source, ErrInvalidJWKS, MaxJWKSBytes)
	}
	return data, nil
}
