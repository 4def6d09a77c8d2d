package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeChecksOpenAPIWhenAsked pins the hook the process tests rely
// on: with AGENTGATE_OPENAPI_CHECK set, serve appends each exchange the
// OpenAPI document does not describe to that file (an accepted request
// with an undocumented query parameter here) and nothing for the ones it
// describes.
func TestServeChecksOpenAPIWhenAsked(t *testing.T) {
	bin := buildBinary(t)
	file := filepath.Join(t.TempDir(), "violations.txt")
	cmd, out, addr := cliServe(t, bin, []string{"--data", t.TempDir(), "--http", "127.0.0.1:0", "--api-key", "qwed_admin_openapi"},
		[]string{openAPICheckEnv + "=" + file})
	for _, target := range []string{"/healthz", "/openapi.json", "/healthz?colour=red"} {
		resp, err := http.Get("http://" + addr + target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", target, resp.StatusCode)
		}
	}
	cliStop(t, cmd)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `GET /healthz: query parameter "colour" is not documented`) {
		t.Fatalf("violations recorded: %q", lines)
	}
}
