package sql

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/enginetest"
)

// TestNonASCII_Queries runs every sampled code point through the places
// of a query where pg_query's scanner reads characters (strings, quoted
// and bare identifiers, dollar quotes, Unicode escapes, comments,
// operators), in the query and in schema_ddl: no crash, no engine
// failure.
func TestNonASCII_Queries(t *testing.T) {
	contexts := []string{
		"SELECT '\x00'", "SELECT \"\x00\" FROM users", "SELECT \x00 FROM users", "SELECT $\x00$ x $\x00$",
		"SELECT $$\x00$$", "SELECT U&'\x00'", "SELECT E'\\\x00'", "SELECT 1 -- \x00\nDROP TABLE users",
		"SELECT /* \x00 */ 1", "SELECT 1 \x00 2", "SELECT {0\x000!}$", "DELETE FROM users WHERE name = '\x00'",
	}
	e := New()
	params := json.RawMessage(`{"schema_ddl":"CREATE TABLE users (id INT, name TEXT)"}`)
	for _, r := range enginetest.NonASCII() {
		for _, c := range contexts {
			q := strings.ReplaceAll(c, "\x00", string(r))
			for _, req := range []engines.Request{
				{Query: q, Params: params},
				{Query: "SELECT 1", Params: mustJSON(t, map[string]string{"schema_ddl": "CREATE TABLE t (\"" + string(r) + "\" INT); " + q})},
			} {
				out := e.Verify(context.Background(), req)
				if out.Err != nil && out.Err.Code == CodeEngine {
					t.Fatalf("engine failure on %q: %+v", req.Query, out.Err)
				}
			}
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
