package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"

	"github.com/agentgate/agentgate/schemas"
)

// openAPIETag is the entity tag of the served OpenAPI document: its
// SHA-256, computed on the first request (the document is embedded in
// the binary).
var openAPIETag = sync.OnceValue(func() string {
	sum := sha256.Sum256(schemas.OpenAPI())
	return `"` + hex.EncodeToString(sum[:16]) + `"`
})

// getOpenAPI serves GET /openapi.json: the OpenAPI 3.1 document of this
// API (schemas/openapi.v1.json, embedded), public like /healthz, with an
// ETag; a matching If-None-Match is answered 304 without a body.
func (a *api) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	etag := openAPIETag()
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age=300")
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "*") {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(schemas.OpenAPI())
}
