package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/agentgate/agentgate/schemas/openapi"
)

// openAPICheckEnv names a file: when it is set, serve checks every HTTP
// exchange against the OpenAPI document (schemas/openapi.v1.json) and
// appends each one the document does not describe to the file, one line
// each. It is for tests that run the binary (this package's, the SDKs'):
// unset, nothing is checked and the handler is the API itself.
const openAPICheckEnv = "AGENTGATE_OPENAPI_CHECK"

// withOpenAPICheck returns h checked as openAPICheckEnv asks (h itself
// when it is unset).
func withOpenAPICheck(h http.Handler, log *slog.Logger) (http.Handler, error) {
	path := os.Getenv(openAPICheckEnv)
	if path == "" {
		return h, nil
	}
	v, err := openapi.Default()
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", openAPICheckEnv, err)
	}
	log.Warn("checking every HTTP exchange against the OpenAPI document", "env", openAPICheckEnv, "file", path)
	var mu sync.Mutex
	return openapi.Middleware(v, h, func(bad []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bad {
			if _, err := f.WriteString(strings.ReplaceAll(b, "\n", " ") + "\n"); err != nil {
				log.Error("recording an OpenAPI violation", "err", err)
			}
		}
	}), nil
}
