package domain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestWindowStartMatchesBinarySearch pins windowStart (with its shortcut
// for a window whose oldest time is live) against a plain search for the
// first time strictly after now-1h, on random sorted windows that are
// empty, all live, all expired or mixed, including times exactly at the
// cut. Reproduce a failure from the seed.
func TestWindowStartMatchesBinarySearch(t *testing.T) {
	seed := uint64(3600)
	rng := rand.New(rand.NewPCG(seed, 3))
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 20000; i++ {
		w := make([]time.Time, rng.IntN(12))
		for j := range w {
			off := time.Duration(rng.Int64N(int64(3*time.Hour))) - 2*time.Hour
			if rng.IntN(5) == 0 {
				off = -time.Hour // exactly at the cut: outside the window
			}
			w[j] = now.Add(off)
		}
		sort.Slice(w, func(a, b int) bool { return w[a].Before(w[b]) })
		want := len(w)
		for j := range w {
			if w[j].After(now.Add(-time.Hour)) {
				want = j
				break
			}
		}
		if got := windowStart(w, now); got != want {
			t.Fatalf("seed %d: windowStart(%v) = %d, want %d", seed, w, got, want)
		}
	}
}

// TestSeed000_9_8_TokenMatchesEveryByte pins the constant-time token
// comparison: equal hashes match, and a difference in any one byte
// (every position, every bit) or any other length never does.
func TestSeed000_9_8_TokenMatchesEveryByte(t *testing.T) {
	h := tokenHash("agent")
	if !tokenMatches(h, h) || !tokenMatches(h, string([]byte(h))) {
		t.Fatal("equal hashes do not match")
	}
	for i := 0; i < len(h); i++ {
		for bit := 0; bit < 8; bit++ {
			b := []byte(h)
			b[i] ^= 1 << bit
			if tokenMatches(string(b), h) || tokenMatches(h, string(b)) {
				t.Fatalf("byte %d bit %d flipped still matches", i, bit)
			}
		}
	}
	for _, s := range []string{"", h[:63], h + "0", h[:56]} {
		if tokenMatches(s, s) || tokenMatches(s, h) {
			t.Fatalf("length %d matched", len(s))
		}
	}
	other := tokenHash("other")
	if n := testing.AllocsPerRun(100, func() { tokenMatches(h, other) }); n != 0 {
		t.Fatalf("tokenMatches allocates %v times per call", n)
	}
}

// TestDesign2_6_SecretHashesComparedWithSubtle pins invariant 6's "compared
// in constant time (crypto/subtle)" in the rules: tokenMatches calls
// subtle.ConstantTimeCompare, and no non-test file of domain/ compares a
// token or key hash with == or != except against "" (absent).
func TestDesign2_6_SecretHashesComparedWithSubtle(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	secret := func(e ast.Expr) bool {
		var name string
		switch e := e.(type) {
		case *ast.Ident:
			name = e.Name
		case *ast.SelectorExpr:
			name = e.Sel.Name
		default:
			return false
		}
		return name == "TokenHash" || name == "KeyHash" || name == "ReplacedHash"
	}
	empty := func(e ast.Expr) bool {
		l, ok := e.(*ast.BasicLit)
		return ok && l.Value == `""`
	}
	subtleCalls := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (secret(n.X) || secret(n.Y)) && !empty(n.X) && !empty(n.Y) {
					t.Errorf("%s: a token or key hash compared with %s; use tokenMatches (crypto/subtle)", fset.Position(n.Pos()), n.Op)
				}
			case *ast.FuncDecl:
				if n.Name.Name != "tokenMatches" || n.Body == nil {
					return true
				}
				ast.Inspect(n.Body, func(m ast.Node) bool {
					if sel, ok := m.(*ast.SelectorExpr); ok && sel.Sel.Name == "ConstantTimeCompare" {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "subtle" {
							subtleCalls++
						}
					}
					return true
				})
			}
			return true
		})
	}
	if subtleCalls != 1 {
		t.Fatalf("tokenMatches calls subtle.ConstantTimeCompare %d times, want once", subtleCalls)
	}
}
