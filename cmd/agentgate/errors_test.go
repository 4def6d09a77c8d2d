package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files (docs/errors.md)")

func renderCatalogue() string {
	var b strings.Builder
	b.WriteString("# Error codes\n\n")
	b.WriteString("Every error the gate returns has the shape `{\"code\",\"message\",\"details\"}` with one of these codes\n")
	b.WriteString("(QWED-Agent spec v1.1 Appendix A, QWED protocol v1.0 §8.3). Generated from `domain.Catalogue` by\n")
	b.WriteString("`go test ./cmd/agentgate -run TestErrorCatalogueDoc -rewrite`.\n\n")
	b.WriteString("| code | HTTP | description |\n| --- | --- | --- |\n")
	for _, c := range domain.Catalogue {
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", c.Code, c.HTTPStatus, c.Description)
	}
	b.WriteString("\nThe `QWED-A2A-*` codes name why an agent-to-agent verdict was not `forwarded`. A verdict is an\n")
	b.WriteString("answer, not an error: `POST /a2a/intercept` and the `qwed.a2a.message` reply carry it with status\n")
	b.WriteString("200 (429 with `Retry-After` for `rate_limited`), and the code is in the recorded event's `error`.\n")
	b.WriteString("Their HTTP column is the status a client would see if the refusal were answered as an error.\n")
	return b.String()
}

// TestErrorCatalogueDoc pins docs/errors.md to the one catalogue in code.
func TestErrorCatalogueDoc(t *testing.T) {
	const path = "../../docs/errors.md"
	want := renderCatalogue()
	if *rewrite {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/errors.md is out of date with domain.Catalogue; rerun with -rewrite")
	}
	seen := map[domain.Code]bool{}
	for _, c := range domain.Catalogue {
		if seen[c.Code] {
			t.Fatalf("code %s listed twice", c.Code)
		}
		seen[c.Code] = true
		if c.HTTPStatus < 200 || c.HTTPStatus > 599 {
			t.Fatalf("code %s has HTTP status %d", c.Code, c.HTTPStatus)
		}
	}
}
