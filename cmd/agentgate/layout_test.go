package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the import path of this repository's module.
const module = "github.com/agentgate/agentgate/"

// importEdge is one row of the layout table: the packages matching from
// (a package path relative to the module; a trailing "/..." matches the
// folder and everything under it) may import, within the module, only the
// packages matching one of may. Rows are tried in order and the first
// match decides, so a room's special cases come before its general row.
type importEdge struct {
	from string
	may  []string
	why  string
}

// layout is the import-edge table of docs/ARCHITECTURE.md ("Layout and
// import edges"). It holds the non-test files of every package; tests may
// import fixtures from anywhere but cmd.
var layout = []importEdge{
	{"cmd/...", []string{"..."}, "the binary wires everything and owns no logic"},

	{"domain/engines/...", []string{"domain/engines/..."},
		"engines are pure verifiers: they know nothing of agents or the log"},
	{"domain/a2a", []string{"domain/jcs", "domain/strictjson"},
		"A2A rules are pure: the domain imports them, they import only the canonical and strict JSON"},
	{"domain/policy", []string{"domain/strictjson"},
		"policy rules are pure: the domain imports them, they import only the strict JSON checker"},
	{"domain/guard", nil,
		"file, network and PII detectors are pure and lexical: the domain imports them, they import nothing of ours"},
	{"domain/...", []string{"domain/..."}, "the pure core imports nothing of ours outside itself"},

	{"projections", []string{"domain/...", "streams", "streams/diskspace"},
		"read models fold the domain's events; they read the log interface to rebuild"},

	{"schemas", []string{"domain/strictjson"}, "schemas are data; strictjson pre-checks documents"},
	{"schemas/openapi", []string{"schemas"}, "the HTTP contract's validator: only tests import it"},

	{"streams/...", []string{"streams/...", "domain/...", "schemas"},
		"logs and codecs know event types, never the request path"},

	{"client/...", []string{"client/...", "domain/...", "schemas", "streams/ce", "streams/cekafka", "streams/kafkaout", "streams/wmkafka"},
		"the SDK speaks the wire formats; the server never imports it"},

	{"handlers/fair", nil, "a scheduler with no knowledge of what it schedules"},
	{"handlers/conformance", []string{"schemas", "handlers/attest"},
		"the conformance runner judges any QWED server over HTTP: the protocol's schemas and the attestation verifier, no server code"},
	{"handlers/attest", []string{"domain/..."}, "signing and verifying attestations"},
	{"handlers/verify/...", []string{"domain/...", "schemas", "streams", "handlers/fair", "handlers/verify/..."},
		"the engines' service: no transport, no log readers"},
	{"handlers/command", []string{"domain/...", "schemas", "handlers", "handlers/attest", "projections", "streams"},
		"bodies become commands here, for every transport"},
	{"handlers/history/seedlog", []string{"domain/...", "streams", "streams/pebblelog", "handlers", "handlers/attest", "handlers/command", "handlers/embedded"},
		"recorded histories for tests: it runs a real embedded gate"},
	{"handlers/history/...", []string{"domain/...", "projections", "streams", "streams/pebblelog/snapshot", "schemas", "handlers", "handlers/attest", "handlers/history/..."},
		"readers of the log take it as a streams.Log: no transport, no Kafka"},
	{"handlers/embedded/gatetest", []string{"domain/...", "streams", "handlers", "handlers/command", "handlers/embedded"},
		"a running embedded gate for tests"},
	{"handlers/embedded", []string{"domain/...", "projections", "streams/...", "handlers", "handlers/attest", "handlers/command"},
		"the embedded deployment: one partition on the local disk"},
	{"handlers/httpapi", []string{"domain/...", "projections", "streams/...", "schemas", "handlers", "handlers/command", "handlers/attest", "handlers/verify", "handlers/history/..."},
		"the HTTP transport does not know which deployment serves it"},
	{"handlers/kafkagate", []string{"domain/...", "projections", "streams/...", "schemas", "handlers", "handlers/command", "handlers/attest", "handlers/verify", "handlers/history/...", "handlers/adapter"},
		"the Kafka deployment: never the SDK, never the HTTP transport"},
	{"handlers/a2aproxy", []string{"domain/..."},
		"proxy mode fronts A2A agents; it reaches the gate only through an Interceptor (the HTTP API in process)"},
	{"handlers/sim", []string{"domain/...", "projections", "streams", "handlers", "handlers/attest", "handlers/command", "handlers/history/replay"},
		"the seeded simulator drives the worker's state machine and checks it against a replay"},
	{"handlers/notify", []string{"domain/...", "projections", "handlers/adapter"},
		"the webhook runner reads due deliveries from the projections and records each attempt through a Gate; it dials under the business calls' network policy"},
	{"handlers/adapter/adaptertest", nil, "a business endpoint for the adapter's tests"},
	{"handlers/adapter", []string{"domain/...", "projections", "streams", "handlers", "handlers/attest"},
		"calls businesses after the commit point: reads committed state and the log, records outcomes through the worker"},
	{"handlers", []string{"domain/...", "projections", "streams/...", "handlers/attest", "handlers/fair"},
		"the partition worker"},
}

// fixtures are the packages written for tests only: no non-test file
// outside another fixture may import them, so they never reach the binary.
var fixtures = []string{
	"domain/engines/enginetest", "streams/logtest", "streams/cekafka/cekafkatest",
	"handlers/embedded/gatetest", "handlers/history/seedlog", "handlers/adapter/adaptertest",
}

// matches reports whether pkg (relative to the module) matches pattern.
func matches(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

// TestLayout_ImportEdges holds the layout table: every import from one of
// the module's packages to another is allowed by the first row matching
// the importer, every package is covered by a row, and no row is dead.
func TestLayout_ImportEdges(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]map[string]bool{} // package -> module packages it imports
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok {
				imports[pkg][dep] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 30 {
		t.Fatalf("found only %d packages under %s: the walk is broken", len(imports), root)
	}
	used := make([]bool, len(layout))
	pkgs := slices.Sorted(func(yield func(string) bool) {
		for p := range imports {
			if !yield(p) {
				return
			}
		}
	})
	for _, pkg := range pkgs {
		row := slices.IndexFunc(layout, func(e importEdge) bool { return matches(e.from, pkg) })
		if row < 0 {
			t.Errorf("package %s is in no row of the layout table: give it a room", pkg)
			continue
		}
		used[row] = true
		deps := slices.Sorted(func(yield func(string) bool) {
			for d := range imports[pkg] {
				if !yield(d) {
					return
				}
			}
		})
		for _, dep := range deps {
			if dep == "client" || strings.HasPrefix(dep, "client/") {
				if !matches("client/...", pkg) && !matches("cmd/...", pkg) {
					t.Errorf("%s imports %s: the server never imports the SDK", pkg, dep)
					continue
				}
			}
			if slices.Contains(fixtures, dep) && !slices.Contains(fixtures, pkg) {
				t.Errorf("%s imports the test fixture %s: fixtures are for tests only", pkg, dep)
				continue
			}
			if !slices.ContainsFunc(layout[row].may, func(m string) bool { return matches(m, dep) }) {
				t.Errorf("%s imports %s, which its row (%s: %s) does not allow", pkg, dep, layout[row].from, layout[row].why)
			}
		}
	}
	for _, f := range fixtures {
		if imports[f] == nil {
			t.Errorf("fixture %s is not a package: fix the list", f)
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("layout row %q matches no package: remove it or fix it", layout[i].from)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s has no go.mod: %v", root, err)
	}
}

// TestLayout_MatchesPatterns pins the pattern rules the table relies on.
func TestLayout_MatchesPatterns(t *testing.T) {
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"domain/...", "domain", true},
		{"domain/...", "domain/engines/sql", true},
		{"domain/...", "domainx", false},
		{"handlers", "handlers/httpapi", false},
		{"handlers", "handlers", true},
		{"...", "anything/at/all", true},
	} {
		if got := matches(c.pattern, c.pkg); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.pattern, c.pkg, got, c.want)
		}
	}
}
