package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// The README's endpoint and error tables are held here to what the gate
// serves and answers: the endpoint table to the OpenAPI document (which
// handlers/httpapi's TestOpenAPIRoutes holds to the router, and
// TestReadmeEndpointsServedByBothDeployments below to both deployments'
// binaries), the error table to domain.Catalogue.

// readmeSection returns the lines of README.md under heading (a whole
// line, "## HTTP API") up to the next heading of the same or a higher
// level.
func readmeSection(t *testing.T, heading string) []string {
	t.Helper()
	return docSection(t, "README.md", heading)
}

// docSection returns the lines of the repository's document file under
// heading up to the next heading of the same or a higher level.
func docSection(t *testing.T, file, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	level := strings.Index(heading, " ")
	var out []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if in {
			if n := strings.Index(l, " "); n > 0 && n <= level && strings.Trim(l[:n], "#") == "" {
				break
			}
			out = append(out, l)
		} else if l == heading {
			in = true
		}
	}
	if !in {
		t.Fatalf("%s has no heading %q", file, heading)
	}
	return out
}

// mdTable returns the rows of the first Markdown table of lines whose
// header is header (its cells), each row's cells trimmed, `\|` read as |.
func mdTable(t *testing.T, lines []string, header ...string) [][]string {
	t.Helper()
	var rows [][]string
	found := false
	for i, l := range lines {
		if !found {
			found = slices.Equal(mdCells(l), header)
			if found && (i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "| ---")) {
				t.Fatalf("the table %v has no separator line", header)
			}
			continue
		}
		if strings.HasPrefix(l, "| ---") {
			continue
		}
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := mdCells(l)
		if len(cells) != len(header) {
			t.Fatalf("table %v: row %q has %d cells, want %d", header, l, len(cells), len(header))
		}
		rows = append(rows, cells)
	}
	if !found {
		t.Fatalf("no table with the header %v", header)
	}
	return rows
}

// mdCells splits a table line into its trimmed cells.
func mdCells(l string) []string {
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, "|") || !strings.HasSuffix(l, "|") {
		return nil
	}
	l = strings.ReplaceAll(l[1:len(l)-1], `\|`, "\x00")
	var out []string
	for _, c := range strings.Split(l, "|") {
		out = append(out, strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|"))
	}
	return out
}

// codeSpan returns the text of a cell that is one code span (`x`), or "".
func codeSpan(c string) string {
	if len(c) < 2 || c[0] != '`' || c[len(c)-1] != '`' || strings.Count(c, "`") != 2 {
		return ""
	}
	return c[1 : len(c)-1]
}

// documentedOperation is an operation of schemas/openapi.v1.json: its
// security schemes (none: public).
type documentedOperation struct {
	schemes []string
}

// documentedOperations reads schemas/openapi.v1.json's operations
// ("METHOD /path").
func documentedOperations(t *testing.T) map[string]documentedOperation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "schemas", "openapi.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ops := map[string]documentedOperation{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				Security *[]map[string][]string `json:"security"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			if op.Security == nil {
				t.Fatalf("%s %s has no security requirement: every operation names its credentials", method, path)
			}
			var d documentedOperation
			for _, req := range *op.Security {
				for name := range req {
					d.schemes = append(d.schemes, name)
				}
			}
			ops[strings.ToUpper(method)+" "+path] = d
		}
	}
	if len(ops) < 60 {
		t.Fatalf("schemas/openapi.v1.json lists %d operations: the test is not reading it right", len(ops))
	}
	return ops
}

// parenthetical matches a parenthesised remark of the auth column.
var parenthetical = regexp.MustCompile(`\([^()]*\)`)

// TestReadmeEndpointTable holds the README's endpoint table ("## HTTP
// API") to the OpenAPI document: one row per operation, none missing and
// none the gate does not serve, each with its method, path, credentials
// and what it does. The auth column, its parenthesised remarks aside,
// says "none" for a public operation, names a key for one that takes an
// API key and a token exactly when it takes an agent token.
func TestReadmeEndpointTable(t *testing.T) {
	ops := documentedOperations(t)
	rows := mdTable(t, readmeSection(t, "## HTTP API"), "method", "path", "auth", "what")
	seen := map[string]bool{}
	for _, r := range rows {
		method, path, auth, what := codeSpan(r[0]), codeSpan(r[1]), r[2], r[3]
		if method == "" || path == "" {
			t.Errorf("row %q: the method and the path are each one code span (`GET`, `/agents/{id}`)", r)
			continue
		}
		route := method + " " + path
		if seen[route] {
			t.Errorf("%s: listed twice", route)
		}
		seen[route] = true
		op, ok := ops[route]
		if !ok {
			t.Errorf("%s: in the README, but the gate serves no such route (schemas/openapi.v1.json)", route)
			continue
		}
		if what == "" {
			t.Errorf("%s: says nothing of what it does", route)
		}
		bare := strings.ToLower(parenthetical.ReplaceAllString(auth, ""))
		public := len(op.schemes) == 0
		if public != (bare == "none") {
			t.Errorf("%s: auth %q, but the document's security is %v", route, auth, op.schemes)
		}
		if slices.Contains(op.schemes, "ApiKey") && !strings.Contains(bare, "key") {
			t.Errorf("%s: auth %q names no key, but the route takes an API key", route, auth)
		}
		if token := slices.Contains(op.schemes, "AgentToken"); token != strings.Contains(bare, "token") {
			t.Errorf("%s: auth %q, but the route takes an agent token: %v", route, auth, token)
		}
	}
	var missing []string
	for route := range ops {
		if !seen[route] {
			missing = append(missing, route)
		}
	}
	slices.Sort(missing)
	for _, route := range missing {
		t.Errorf("%s: served (schemas/openapi.v1.json) but not in the README's endpoint table", route)
	}
}

// TestReadmeErrorTable holds the README's error table ("### Error codes")
// to the one catalogue, domain.Catalogue: every code once, in the
// catalogue's order, with its HTTP status and its description, and when
// the gate answers it.
func TestReadmeErrorTable(t *testing.T) {
	rows := mdTable(t, readmeSection(t, "### Error codes"), "code", "HTTP", "meaning", "when")
	var got []string
	for _, r := range rows {
		code := domain.Code(codeSpan(r[0]))
		got = append(got, string(code))
		if !code.Known() {
			t.Errorf("%s: in the README, not in domain.Catalogue", r[0])
			continue
		}
		if st := strconv.Itoa(code.HTTPStatus()); r[1] != st {
			t.Errorf("%s: HTTP %s in the README, %s in the catalogue", code, r[1], st)
		}
		if r[2] != code.Description() {
			t.Errorf("%s: meaning %q in the README, %q in the catalogue", code, r[2], code.Description())
		}
		if r[3] == "" {
			t.Errorf("%s: says nothing of when the gate answers it", code)
		}
	}
	var want []string
	for _, c := range domain.Catalogue {
		want = append(want, string(c.Code))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the README's codes are not the catalogue's, in its order:\n README    %v\n catalogue %v", got, want)
	}
}

// codeLiteral matches an error code of the gate's families as it is
// written anywhere (QWED-REQ-001, QWED-AGENT-LOOP-004, QWED-REQ-404).
var codeLiteral = regexp.MustCompile(`\bQWED-(?:[A-Z0-9]+-)+[0-9]{3}\b`)

// walkRepository calls f with the path and contents of every file of the
// repository whose extension is one of exts, outside hidden directories,
// node_modules and build output; it returns how many it read.
func walkRepository(t *testing.T, exts []string, f func(path string, b []byte)) int {
	t.Helper()
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "dist" || n == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.ContainsFunc(exts, func(e string) bool { return strings.HasSuffix(path, e) }) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		f(path, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestEveryCodeWrittenIsCatalogued scans the repository's sources and
// documents (Go outside tests, the SDKs, the schemas, the Markdown) for
// error codes: each must be in domain.Catalogue, so that no package
// answers a code of its own (engines and the policy package, which cannot
// import domain, write the catalogue's codes as strings).
func TestEveryCodeWrittenIsCatalogued(t *testing.T) {
	found := map[string]bool{}
	files := walkRepository(t, []string{".go", ".ts", ".js", ".mjs", ".py", ".json", ".md"}, func(path string, b []byte) {
		if strings.HasSuffix(path, "_test.go") {
			return
		}
		for _, c := range codeLiteral.FindAllString(string(b), -1) {
			found[c] = true
			if !domain.Code(c).Known() {
				t.Errorf("%s writes %s, which is not in domain.Catalogue (domain/errors.go)", path, c)
			}
		}
	})
	if files < 500 || len(found) < len(domain.Catalogue)/2 {
		t.Fatalf("read %d files, found %d codes: the walk is not looking where the sources are", files, len(found))
	}
}

// testFunc matches a Go test function's declaration.
var testFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(`)

// repositoryTests returns the names of the repository's Go tests.
func repositoryTests(t *testing.T) map[string]bool {
	t.Helper()
	tests := map[string]bool{}
	walkRepository(t, []string{"_test.go"}, func(_ string, b []byte) {
		for _, m := range testFunc.FindAllSubmatch(b, -1) {
			tests[string(m[1])] = true
		}
	})
	if len(tests) < 1000 {
		t.Fatalf("found %d tests: the walk is not looking where they are", len(tests))
	}
	return tests
}

// docTestName matches a test's name cited in a document, and the
// ellipsis after a prefix (TestServeTLS_Protocol10_5_…).
var docTestName = regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*(…)?`)

// TestDocsNameOnlyTestsThatExist: every test the README and docs/ name
// is a test of the repository, so that a design note never cites a test
// that was renamed or removed. A name ending in "_" names a family
// (TestSeed002_), one followed by "…" the tests it begins.
func TestDocsNameOnlyTestsThatExist(t *testing.T) {
	tests := repositoryTests(t)
	cited := 0
	for _, f := range userDocs(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docTestName.FindAllStringSubmatch(string(b), -1) {
			name, prefix := strings.TrimSuffix(m[0], "…"), m[1] != ""
			if strings.HasSuffix(name, "_") && !prefix {
				continue
			}
			cited++
			found := tests[name]
			for n := range tests {
				found = found || (prefix && strings.HasPrefix(n, name))
			}
			if !found {
				t.Errorf("%s names %s, which is no test of the repository", filepath.Base(f), m[0])
			}
		}
	}
	if cited < 100 {
		t.Fatalf("found %d test names in the documents: the pattern no longer matches them", cited)
	}
}

// specSectionMap is the heading of docs/ARCHITECTURE.md whose table maps
// issue 16's items to their tests.
const specSectionMap = "### The README's tables and the spec-section tests (tables)"

// mapTest matches one test of the map's tests column: `Name` (tags).
var mapTest = regexp.MustCompile("`(Test\\w+)` \\(([^)]*)\\)")

// section matches a section number of the map's spec section column.
var section = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)

// TestSpecSectionMap holds the map of docs/ARCHITECTURE.md from issue
// 16's items to their tests: every test it names exists, every name
// carries one of its row's sections (AgentSpec5_3, AgentSpec_5_3,
// Protocol10_5, QWEDProtocol_8_3; AgentGuide for the QWED-Agent user
// guide), and every deployment of a row has a test tagged with it.
func TestSpecSectionMap(t *testing.T) {
	tests := repositoryTests(t)
	rows := mdTable(t, docSection(t, filepath.Join("docs", "ARCHITECTURE.md"), specSectionMap), "item", "spec section", "tests", "deployments")
	items := map[string]bool{}
	for _, r := range rows {
		item, spec, cell, deployments := r[0], r[1], r[2], r[3]
		num, _, _ := strings.Cut(item, " ")
		items[num] = true
		var names string
		if strings.Contains(spec, "user guide") {
			names = "AgentGuide"
		} else {
			var secs []string
			for _, m := range section.FindAllStringSubmatch(spec, -1) {
				secs = append(secs, strings.ReplaceAll(m[1], ".", "_"))
			}
			if len(secs) == 0 {
				t.Errorf("item %s: the spec section %q names no section (§n.n) and is not the user guide", item, spec)
				continue
			}
			names = `(?:AgentSpec|Protocol)_?(?:` + strings.Join(secs, "|") + `)(?:_|$)`
		}
		named := regexp.MustCompile(names)
		tagged := map[string]bool{}
		found := mapTest.FindAllStringSubmatch(cell, -1)
		if len(found) == 0 {
			t.Errorf("item %s names no test as `Name` (deployment)", item)
		}
		for _, m := range found {
			if !tests[m[1]] {
				t.Errorf("item %s: %s is no test of the repository", item, m[1])
			}
			if !named.MatchString(m[1]) {
				t.Errorf("item %s: %s is not named after %s (want a name matching %s)", item, m[1], spec, names)
			}
			for _, tag := range strings.Split(m[2], ", ") {
				tagged[tag] = true
			}
		}
		for _, d := range strings.Split(deployments, ", ") {
			if d != "embedded" && d != "Kafka" {
				t.Errorf("item %s: deployment %q is neither embedded nor Kafka", item, d)
			} else if !tagged[d] {
				t.Errorf("item %s: no test tagged (%s)", item, d)
			}
		}
	}
	for _, n := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14"} {
		if !items[n] {
			t.Errorf("issue 16's item %s has no row", n)
		}
	}
}

// TestReadmeEndpointsServedByBothDeployments starts the gate in both
// deployments, embedded and on Kafka, each fronting an A2A agent, and sends
// every documented operation to each without credentials: every one must
// reach its route (whatever it answers: a refusal, an unknown id), none
// the router's "no endpoint" 404 or its 405. With TestReadmeEndpointTable
// it holds the README's table to what both deployments serve.
func TestReadmeEndpointsServedByBothDeployments(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	// Every request below is refused: the refusal limit must not
	// answer for the routes.
	common := []string{"--a2a-upstream", "fronted=http://127.0.0.1:1", "--refusal-burst", "100000", "--refusal-global-burst", "100000"}
	_, _, embedded := cliServe(t, bin, append([]string{"--data", filepath.Join(t.TempDir(), "gate"), "--http", "127.0.0.1:0", "--api-key", "admin-key"}, common...), nil)
	broker := devKafkaProcess(t, bin, filepath.Join(t.TempDir(), "broker"))
	kafka := startKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate-kafka"), common...)

	ops := documentedOperations(t)
	routes := make([]string, 0, len(ops))
	for route := range ops {
		routes = append(routes, route)
	}
	slices.Sort(routes)
	placeholder := regexp.MustCompile(`\{[^}]+\}`)
	for _, gate := range []struct{ name, addr string }{{"embedded", embedded}, {"kafka", kafka.http}} {
		for _, route := range routes {
			method, path, _ := strings.Cut(route, " ")
			path = placeholder.ReplaceAllStringFunc(path, func(p string) string {
				if p == "{name}" {
					return "fronted"
				}
				return "x"
			})
			req, err := http.NewRequest(method, "http://"+gate.addr+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %s: %v", gate.name, route, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusMethodNotAllowed || (resp.StatusCode == http.StatusNotFound && strings.Contains(string(body), `"no endpoint `)) {
				t.Errorf("%s: %s is documented but not served: %d %s", gate.name, route, resp.StatusCode, body)
			}
		}
	}
}
