package httpapi

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/agentgate/agentgate/domain"
)

// readBody reads the request body, at most limit bytes. It returns what it
// read even on error (the digest of the rejection covers it).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf *bytes.Buffer) *apiError {
	if r.ContentLength > limit {
		return reject(domain.CodeTooLong, map[string]any{"max_body_bytes": limit, "content_length": r.ContentLength},
			"request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit)
	}
	// MaxBytesReader tells the connection's own writer to close the
	// connection after an oversized body, so it gets the unwrapped one.
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	if err == nil {
		return nil
	}
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return reject(domain.CodeTooLong, map[string]any{"max_body_bytes": limit},
			"request body exceeds the limit of %d bytes", limit)
	}
	return reject(domain.CodeInvalidRequest, nil, "reading the request body: %v", err)
}
