package domain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// engineStdlib is the standard library every engine may import: pure
// computation, no IO, no clock, no randomness, no logging. context is
// there for the Solver the logic engine waits on; io only for the
// in-memory readers of the image decoders.
var engineStdlib = map[string]bool{
	"bytes": true, "cmp": true, "context": true, "errors": true, "fmt": true, "iter": true,
	"maps": true, "math": true, "math/big": true, "math/bits": true, "slices": true, "sort": true,
	"strconv": true, "strings": true, "sync": true, "unicode": true, "unicode/utf8": true, "unicode/utf16": true,
	"regexp": true, "regexp/syntax": true, "container/heap": true, "container/list": true,
	"encoding/json": true, "encoding/base64": true, "encoding/base32": true, "encoding/hex": true,
	"encoding/binary": true, "encoding/csv": true, "crypto/sha256": true, "hash/crc32": true, "io": true,
	"github.com/agentgate/agentgate/domain/engines": true,
	"github.com/agentgate/agentgate/domain/jcs":     true,
	"github.com/cockroachdb/apd/v3":                 true,
}

// engineExtra is each engine's own allow-list on top of engineStdlib: the
// parsers it is built on (tree-sitter for code, pg_query for sql), the
// image decoders, and the engines reasoning delegates to.
var engineExtra = map[string][]string{
	"code": {
		"github.com/tree-sitter/go-tree-sitter",
		"github.com/tree-sitter/tree-sitter-python/bindings/go",
		"github.com/tree-sitter/tree-sitter-javascript/bindings/go",
		"github.com/tree-sitter/tree-sitter-bash/bindings/go",
	},
	"sql": {
		"github.com/pganalyze/pg_query_go/v6",
		"github.com/pganalyze/pg_query_go/v6/parser",
		"google.golang.org/protobuf/proto",
		"google.golang.org/protobuf/reflect/protoreflect",
	},
	"image": {"image", "image/color", "image/gif", "image/jpeg", "image/png", "golang.org/x/image/webp", "golang.org/x/image/bmp", "golang.org/x/image/tiff"},
	"reasoning": {
		"github.com/agentgate/agentgate/domain/engines/math",
		"github.com/agentgate/agentgate/domain/engines/logic",
	},
	"math":  nil,
	"logic": nil,
	"stats": nil,
	"fact":  nil,
	// enginetest is the engines' shared test inputs, not an engine.
	"enginetest": nil,
}

// forbiddenEngineCalls read the clock or wait on it (time is not on the
// allow-list; this also catches a dot-free alias).
var forbiddenEngineCalls = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true,
	"Tick": true, "NewTicker": true, "NewTimer": true,
}

// TestIssue4_EnginesImportOnlyPurePackages pins the engines' purity
// (engines-common brief; DESIGN.md §5): every non-test file under
// domain/engines imports only the shared allow-list plus its engine's own
// (an engine's sub-packages share its list), and no engine reads the
// clock. An engine directory not in engineExtra is refused: a new engine
// states its dependencies here.
func TestIssue4_EnginesImportOnlyPurePackages(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("engines", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel("engines", path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		engine := ""
		if len(parts) > 1 {
			engine = parts[0]
			if _, known := engineExtra[engine]; !known {
				t.Errorf("%s: engine %q has no allow-list in engineExtra", path, engine)
			}
		}
		allowed := func(p string) bool {
			if engineStdlib[p] {
				return true
			}
			for _, x := range engineExtra[engine] {
				if p == x {
					return true
				}
			}
			// An engine's own sub-packages.
			return engine != "" && strings.HasPrefix(p, "github.com/agentgate/agentgate/domain/engines/"+engine+"/")
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed(p) {
				t.Errorf("%s imports %q, which is not on the allow-list of engine %q", path, p, engine)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && forbiddenEngineCalls[sel.Sel.Name] {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" {
					t.Errorf("%s: time.%s reads the clock", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 2 {
		t.Fatalf("checked only %d files: is the test running in domain/?", checked)
	}
}
