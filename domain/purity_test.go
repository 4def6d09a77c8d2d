package domain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// domainPackages lists every package under domain/ (its directory relative
// to domain/) and what it holds. A new package states its place here, and
// its imports in pureImports, before TestDesign5_DomainIsPure accepts it.
var domainPackages = map[string]string{
	".":                  "the rules: Decide, the fold, risk, trust, budgets",
	"a2a":                "agent-to-agent interception's rules (QWED A2A)",
	"policy":             "the consumer policy engine's rules: policies, the rolling ledger, evaluation, analytics",
	"guard":              "the lexical file, network and PII detectors (QWED-Agent §2.2, §5.2)",
	"jcs":                "RFC 8785 canonical JSON",
	"strictjson":         "strict JSON checks of request bodies",
	"eventjson":          "the event codec",
	"engines":            "the verification engine interface",
	"engines/code":       "code engine (tree-sitter)",
	"engines/enginetest": "the engines' shared test inputs",
	"engines/fact":       "fact engine",
	"engines/image":      "image engine",
	"engines/logic":      "logic engine (its solver is a process in handlers/verify/z3pool)",
	"engines/math":       "math engine",
	"engines/reasoning":  "reasoning engine (math and logic steps)",
	"engines/sql":        "sql engine (pg_query, the TiDB parser for MySQL, meyer for SQLite)",
	"engines/stats":      "stats engine",
}

// pureImport is one import a package under domain/ may have: the packages
// that may (in; nil for every package) and why it is pure.
type pureImport struct {
	path string
	in   []string
	why  string
}

// Package groups of pureImports.
var (
	engineDirs = []string{"engines", "engines/code", "engines/fact", "engines/image", "engines/logic",
		"engines/math", "engines/reasoning", "engines/sql", "engines/stats"}
	codecDirs = []string{"eventjson", "strictjson"}
)

// pureImports is the one allow-list of domain/ (invariant 1 of
// docs/ARCHITECTURE.md, and its layout): pure computation only. Nothing here does IO, reads
// a clock, draws randomness or logs; what could (sync, time, context, io,
// reflect, unsafe) is granted only to the packages that need it, with the
// reason.
var pureImports = []pureImport{
	{"bytes", nil, "byte slices"},
	{"cmp", nil, "ordering"},
	{"errors", nil, "error values"},
	{"fmt", nil, "formatting into strings and errors (never printing: no os)"},
	{"maps", nil, "map helpers"},
	{"math", nil, "floating-point helpers"},
	{"math/big", nil, "exact arithmetic"},
	{"math/bits", nil, "bit operations"},
	{"slices", nil, "slice helpers"},
	{"sort", nil, "sorting"},
	{"strconv", nil, "number and string conversion"},
	{"strings", nil, "string helpers"},
	{"unicode", nil, "character classes"},
	{"unicode/utf8", nil, "UTF-8"},
	{"unicode/utf16", nil, "UTF-16 surrogates of JSON escapes"},
	{"encoding/json", nil, "JSON values (json.RawMessage, json.Number) and decoding"},
	{"encoding/hex", []string{".", "a2a", "engines/code", "engines/image"}, "hex digests"},
	{"encoding/base64", []string{"engines/code", "engines/image"}, "decoding embedded payloads"},
	{"encoding/base32", []string{"engines/code"}, "decoding obfuscated payloads"},
	{"encoding/binary", []string{"eventjson", "engines/image"}, "fixed-width integers"},
	{"encoding/csv", []string{"engines/stats"}, "the stats engine's tables"},
	{"encoding", []string{"strictjson"}, "the TextUnmarshaler interface"},
	{"crypto/sha256", []string{".", "a2a", "engines/image"}, "digests"},
	{"crypto/subtle", []string{"."}, "constant-time comparison of token hashes (DESIGN.md §2.6)"},
	{"sync", []string{".", "a2a", "jcs", "eventjson", "strictjson", "engines/code", "policy"},
		"pools of scratch buffers and tables built once; never a goroutine (the test refuses go statements)"},
	{"time", []string{".", "eventjson", "a2a", "policy"}, "times and durations as values; reading the clock is refused below"},
	{"context", engineDirs, "the Engine interface's cancellation: the logic engine waits on its Solver"},
	{"io", []string{"engines/stats", "policy", "guard"}, "in-memory readers (encoding/csv; policy: the embedded zoneinfo.zip; guard: io.EOF of a JSON token stream)"},
	{"net/netip", []string{"guard"}, "IP addresses as values: parsing and classifying literals, never a lookup"},
	{"net/url", []string{"guard"}, "URL parsing, never a request"},
	{"path", []string{"guard"}, "lexical path cleaning and matching, never the file system"},
	{"regexp", []string{"engines/sql"}, "finding MariaDB's /*M! comment openings (RE2: linear time, deterministic)"},
	{"archive/zip", []string{"policy"}, "the IANA time zone database embedded in the package, read from memory"},
	{"embed", []string{"policy"}, "the embedded time zone database (zoneinfo.zip), never the host's files"},
	{"reflect", append([]string{"a2a", "policy"}, codecDirs...), "the codecs' checks of decoded types (a2a: the strict AgentMessage decoder; policy: the strict policy decoder)"},
	{"unsafe", []string{"eventjson"}, "string views of decoded bytes"},
	{"image/gif", []string{"engines/image"}, "image decoders over in-memory bytes"},
	{"image/jpeg", []string{"engines/image"}, "image decoders over in-memory bytes"},
	{"image/png", []string{"engines/image"}, "image decoders over in-memory bytes"},
	{"github.com/cockroachdb/apd/v3", []string{".", "a2a"}, "decimal money (a2a: finance_guard)"},
	{"github.com/json-iterator/go", []string{"eventjson"}, "the event decoder"},
	{"github.com/modern-go/reflect2", []string{"eventjson"}, "the event decoder's type access"},
	{"github.com/tree-sitter/go-tree-sitter", []string{"engines/code"}, "the code engine's parser (C; run in engine workers)"},
	{"github.com/tree-sitter/tree-sitter-python/bindings/go", []string{"engines/code"}, "Python grammar"},
	{"github.com/tree-sitter/tree-sitter-javascript/bindings/go", []string{"engines/code"}, "JavaScript grammar"},
	{"github.com/tree-sitter/tree-sitter-bash/bindings/go", []string{"engines/code"}, "Bash grammar"},
	{"github.com/pganalyze/pg_query_go/v6", []string{"engines/sql"}, "the sql engine's parser (C; run in engine workers)"},
	{"github.com/pganalyze/pg_query_go/v6/parser", []string{"engines/sql"}, "pg_query's parse errors"},
	{"github.com/pingcap/tidb/pkg/parser", []string{"engines/sql"}, "the sql engine's MySQL parser (pure Go; run in engine workers)"},
	{"github.com/pingcap/tidb/pkg/parser/ast", []string{"engines/sql"}, "the MySQL parse tree"},
	{"github.com/pingcap/tidb/pkg/parser/opcode", []string{"engines/sql"}, "the MySQL parse tree's operators"},
	{"github.com/pingcap/tidb/pkg/parser/format", []string{"engines/sql"}, "restoring a MySQL operand's text to compare two operands (in memory)"},
	{"github.com/pingcap/tidb/pkg/parser/mysql", []string{"engines/sql"}, "the MySQL parser's SQL modes (NO_BACKSLASH_ESCAPES)"},
	{"github.com/pingcap/tidb/pkg/parser/test_driver", []string{"engines/sql"}, "the MySQL parser's stand-alone literal values"},
	{"github.com/sqlc-dev/meyer/ast", []string{"engines/sql"}, "the SQLite parse tree"},
	{"github.com/sqlc-dev/meyer/parser", []string{"engines/sql"}, "the sql engine's SQLite parser (pure Go; run in engine workers)"},
	{"google.golang.org/protobuf/proto", []string{"engines/sql"}, "pg_query's parse tree"},
	{"google.golang.org/protobuf/reflect/protoreflect", []string{"engines/sql"}, "walking pg_query's parse tree"},
	{"github.com/agentgate/agentgate/domain", []string{"eventjson"}, "the types it encodes"},
	{"github.com/agentgate/agentgate/domain/jcs", []string{".", "a2a"}, "canonical JSON of digests"},
	{"github.com/agentgate/agentgate/domain/a2a", []string{".", "eventjson"}, "the AgentMessage, its guards and token bucket"},
	{"github.com/agentgate/agentgate/domain/policy", []string{".", "eventjson"}, "consumer policies, the rolling ledger and their evaluation"},
	{"github.com/agentgate/agentgate/domain/strictjson", []string{"a2a", "policy"}, "strict decoding of the AgentMessage and of policies"},
	{"golang.org/x/net/idna", []string{"guard"}, "host names mapped and converted to A-labels (UTS #46, IDNA2008), never a lookup"},
	{"golang.org/x/text/unicode/norm", []string{"a2a", "guard"}, "code_guard's normalization of the code it scans; guard: refusing paths NFKC would change"},
	{"github.com/agentgate/agentgate/domain/guard", []string{"."}, "the file, network and PII detectors"},
	{"github.com/agentgate/agentgate/domain/engines", append([]string{".", "eventjson"}, engineDirs[1:]...), "the engine interface and outcome types"},
	{"github.com/agentgate/agentgate/domain/engines/math", []string{"engines/reasoning"}, "reasoning's arithmetic steps"},
}

// forbiddenTimeCalls read the clock or wait on it.
var forbiddenTimeCalls = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTicker": true, "NewTimer": true,
}

// importAllowed reports whether the package in dir may import path.
func importAllowed(dir, path string) bool {
	for _, p := range pureImports {
		if p.path == path {
			return p.in == nil || slices.Contains(p.in, dir)
		}
	}
	return false
}

// purityFaults returns what breaks the rules in the Go source src of a
// non-test file of the package in dir: an import not granted to it, a
// call that reads the clock, a go statement.
func purityFaults(fset *token.FileSet, dir, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var faults []string
	timeName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !importAllowed(dir, p) {
			faults = append(faults, name+" imports "+strconv.Quote(p)+", which pureImports does not grant to domain/"+dir)
		}
		if p == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			faults = append(faults, fset.Position(n.Pos()).String()+": a go statement; the core runs no goroutines")
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && forbiddenTimeCalls[n.Sel.Name] {
				faults = append(faults, fset.Position(n.Pos()).String()+": "+timeName+"."+n.Sel.Name+" reads the clock; time must come from Env.Now")
			}
		}
		return true
	})
	return faults, nil
}

// TestDesign5_DomainIsPure pins invariant 1 of docs/ARCHITECTURE.md (and the
// layout) for every package under domain/ — the rules, the codecs, the engines:
// each non-test file imports only what pureImports grants its package, never
// reads the clock and starts no goroutine; every package is listed in
// domainPackages.
func TestDesign5_DomainIsPure(t *testing.T) {
	fset := token.NewFileSet()
	checked := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if _, ok := domainPackages[dir]; !ok {
			t.Errorf("%s: package domain/%s is not in domainPackages", path, dir)
			return nil
		}
		checked[dir]++
		faults, err := purityFaults(fset, dir, path, nil)
		if err != nil {
			return err
		}
		for _, f := range faults {
			t.Error(f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range domainPackages {
		if checked[dir] == 0 {
			t.Errorf("domain/%s has no file checked: is the test running in domain/, or is the package gone from domainPackages' list?", dir)
		}
	}
}

// TestDesign5_PurityCheckRefuses pins that the check catches each kind of
// fault, so a table entry that grants too much or a walk that checks
// nothing cannot pass silently.
func TestDesign5_PurityCheckRefuses(t *testing.T) {
	cases := []struct {
		dir, src, want string
	}{
		{".", `package d; import "os"; var _ = os.Args`, `imports "os"`},
		{".", `package d; import "math/rand"; var _ = rand.Int`, `imports "math/rand"`},
		{".", `package d; import "crypto/rand"; var _ = rand.Reader`, `imports "crypto/rand"`},
		{"engines/fact", `package f; import "sync"; var _ sync.Mutex`, `imports "sync"`},
		{"engines/math", `package m; import "time"; var _ time.Duration`, `imports "time"`},
		{"engines/math", `package m; import "io"; var _ io.Reader`, `imports "io"`},
		{"engines/math", `package m; import "github.com/pganalyze/pg_query_go/v6"; var _ = pg_query.Parse`, `pg_query_go`},
		{".", `package d; import "time"; func f() time.Time { return time.Now() }`, "time.Now reads the clock"},
		{".", `package d; import clock "time"; func f() { clock.Sleep(1) }`, "clock.Sleep reads the clock"},
		{".", `package d; func f() { go f() }`, "a go statement"},
	}
	for _, c := range cases {
		faults, err := purityFaults(token.NewFileSet(), c.dir, "x.go", c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if !slices.ContainsFunc(faults, func(f string) bool { return strings.Contains(f, c.want) }) {
			t.Errorf("domain/%s %q: faults %q, want one naming %q", c.dir, c.src, faults, c.want)
		}
	}
	ok, err := purityFaults(token.NewFileSet(), "engines/sql", "x.go", `package s; import "github.com/pganalyze/pg_query_go/v6"; import "time"; var _ = pg_query.Parse; var _ time.Duration`)
	if err != nil {
		t.Fatal(err)
	}
	if len(ok) != 1 || !strings.Contains(ok[0], `"time"`) {
		t.Errorf("engines/sql: faults %q, want only the time import", ok)
	}
}
