package verify_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/schemas"
)

// foldGate records calls by deciding them with the real domain.Decide and
// folding them with domain.Apply on an in-memory state: the worker's pure
// half, without the Pebble log, so that a fuzzer can run it thousands of
// times a second.
type foldGate struct {
	mu     sync.Mutex
	st     *domain.State
	seq    uint64
	signer domain.Signer
}

func (g *foldGate) Submit(_ context.Context, cmd *domain.Command) (*domain.Event, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	env := domain.Env{Now: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), Seq: g.seq + 1, Signer: g.signer}
	ev := domain.Decide(g.st, env, cmd)
	if ev != nil {
		domain.Apply(g.st, ev)
		g.seq = ev.Seq
	}
	return ev, nil
}

// FuzzServiceVerify runs any body through the protocol service over the
// built-in engines (the logic engine without a solver): never a panic; a
// status from 200 to 599; a body that validates against §6.1, §6.4 or is
// a §8.4 error with a catalogue code; a 4xx refusal carries the rejection
// the transport records.
func FuzzServiceVerify(f *testing.F) {
	kr, err := attest.OpenKeyring(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	reg, err := verify.NewRegistry(verify.Builtin(verify.BuiltinOptions{})...)
	if err != nil {
		f.Fatal(err)
	}
	svc, err := verify.New(verify.Config{Registry: reg, Gate: &foldGate{st: domain.NewState(), signer: kr.Signer("fuzz")}})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"query":"2+2=4","type":"math"}`, `{"query":"x**2 + 2*x + 1 = (x+1)**2","type":"math","options":{"include_proof":true}}`,
		`{"query":"(AND (GT x 5))","type":"logic"}`, `{"query":"SELECT * FROM t","type":"sql","params":{"schema_ddl":"CREATE TABLE t (a INT)"}}`,
		`{"query":"import os; os.system('x')","type":"code","options":{"include_attestation":true}}`,
		`{"query":"mean(a) = 2","type":"stats","params":{"csv":"a\n1\n3"}}`, `{"query":"Paris is in France","type":"fact","params":{"context":"Paris is in France."}}`,
		`{"query":"width = 1","type":"image","params":{"image":"iVBORw0KGgo="}}`, `{"query":"2+2=4\n4*3=12","type":"reasoning"}`,
		`{"batch":true,"items":[{"query":"2+2=4","type":"math"},{"query":"1=2","type":"math"}],"options":{"max_parallel":2,"fail_fast":true}}`,
		`{"batch":true,"items":[]}`, `{"query":"q","type":"chemistry"}`, `{"type":"math"}`, `{}`, `[]`, `null`, `{"query":1}`,
		`{"query":"q","options":{"timeout_ms":-1}}`, `{"query":"q","metadata":{"request_id":"x"}}`, `{"a":1e999}`, "\xff",
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(`{"query":"2+2=4","type":"math"}`), "2.0")
	var n int
	var mu sync.Mutex
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		mu.Lock()
		n++
		id := strconv.Itoa(n)
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ans := svc.Verify(ctx, verify.Call{Body: body, Version: version, Principal: domain.AdminPrincipal, Request: domain.RequestID{Source: "fuzz", ID: id}})
		if ans.Status < 200 || ans.Status > 599 {
			t.Fatalf("status %d for %q", ans.Status, body)
		}
		var m map[string]any
		if err := json.Unmarshal(ans.Body, &m); err != nil {
			t.Fatalf("body %q is not a JSON object: %v", ans.Body, err)
		}
		sch := schemas.Response()
		if strings.Contains(string(ans.Body), `"batch":true`) {
			sch = schemas.BatchResponse()
		}
		if vs, err := sch.ValidateJSON(ans.Body); err != nil || vs != nil {
			t.Fatalf("response %s to %q does not validate against %s: %v %+v", ans.Body, body, sch.ID(), err, vs)
		}
		if e, ok := m["error"].(map[string]any); ok {
			if code, _ := e["code"].(string); !domain.Code(code).Known() {
				t.Fatalf("unknown error code %q in %s", code, ans.Body)
			}
		}
		if ans.Rejection != nil && (ans.Status < 400 || ans.Status > 499 || !ans.Rejection.Code.Known()) {
			t.Fatalf("rejection %+v with status %d", ans.Rejection, ans.Status)
		}
		// A rejection is recorded in the log: its details must be detail
		// values the event codec writes (domain.Details).
		if ans.Rejection != nil {
			if _, err := eventjson.AppendError(nil, ans.Rejection); err != nil {
				t.Fatalf("the rejection of %q cannot be recorded: %v", body, err)
			}
		}
	})
}
