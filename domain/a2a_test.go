package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
)

// SignA2A makes hashSigner an a2a.Signer: the token is a digest of the
// claims, deterministic like ES256 with RFC 6979.
func (hashSigner) SignA2A(c a2a.Claims) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return "a2a." + hex.EncodeToString(h[:8]), nil
}

// SignA2A fails, like a signer whose key store is gone.
func (failingSigner) SignA2A(a2a.Claims) (string, error) {
	return "", errors.New("key store unavailable")
}

// plainSigner signs decisions but not A2A verdicts.
type plainSigner struct{}

func (plainSigner) Sign(AttestationClaims) (string, error) { return "att", nil }

const finPayload = `{"data":{"claimed_total":%s,"line_items":[{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`

func a2aMsg(from, to string, typ a2a.PayloadType, payload string) *Command {
	return &Command{Type: CmdA2AMessage, Principal: "org_1",
		A2A: &a2a.Message{SenderAgentID: from, ReceiverAgentID: to, PayloadType: typ, Payload: json.RawMessage(payload)}}
}

func boundary(principal, op, agent, sender, receiver string) *Command {
	return &Command{Type: CmdA2ABoundary, Principal: principal,
		A2ABoundary: &A2ABoundaryChange{Op: op, Agent: agent, Sender: sender, Receiver: receiver}}
}

// trustAll trusts the agents in org_1's boundary.
func (g *gate) trustAll(agents ...string) {
	g.t.Helper()
	for _, a := range agents {
		if ev := g.exec(boundary("org_1", A2AOpTrust, a, "", "")); ev.Type != EvA2ABoundaryChanged {
			g.t.Fatalf("trust %s: %+v", a, ev.Error)
		}
	}
}

func verdictOf(t *testing.T, ev *Event) *A2AVerdict {
	t.Helper()
	if ev.Type != EvA2AVerdict || ev.A2AVerdict == nil {
		t.Fatalf("no verdict: %s %+v", ev.Type, ev.Error)
	}
	return ev.A2AVerdict
}

// The seed's examples: a verified financial payload is forwarded by
// finance_guard, a wrong total blocked; a contradiction and dangerous
// code are blocked; general is a passthrough. Each verdict is signed.
func TestA2AGuardsDecide(t *testing.T) {
	g := newGate(t)
	g.trustAll("procurement-agent", "treasury-agent")
	cases := []struct {
		typ     a2a.PayloadType
		payload string
		status  a2a.Status
		engine  string
		code    Code
		reason  string
	}{
		{a2a.PayloadFinancial, strings.Replace(finPayload, "%s", "150.00", 1), a2a.StatusForwarded, a2a.EngineFinance, "", ""},
		{a2a.PayloadFinancial, strings.Replace(finPayload, "%s", "999.99", 1), a2a.StatusBlocked, a2a.EngineFinance, CodeA2AFinance,
			"Mathematical hallucination detected: claimed_total=999.99, computed_total=150.00"},
		{a2a.PayloadLogic, `{"assertions":[{"claim":"budget_approved"},{"claim":"budget_approved","negated":true}]}`, a2a.StatusBlocked, a2a.EngineLogic, CodeA2ALogic, ""},
		{a2a.PayloadCode, `{"code":"import os\nos.system('ls')"}`, a2a.StatusBlocked, a2a.EngineCode, CodeA2ACode, ""},
		{a2a.PayloadCode, `{"code":"print(1+1)"}`, a2a.StatusForwarded, a2a.EngineCode, "", ""},
		{a2a.PayloadGeneral, `{"message":"Hello!"}`, a2a.StatusForwarded, a2a.EnginePassthrough, "", "general: passthrough"},
		{a2a.PayloadDataQuery, `{"q":"x"}`, a2a.StatusForwarded, a2a.EnginePassthrough, "", "data_query: passthrough"},
	}
	for _, c := range cases {
		ev := g.exec(a2aMsg("procurement-agent", "treasury-agent", c.typ, c.payload))
		v := verdictOf(t, ev)
		if v.Status != c.status || v.Engine != c.engine || (c.reason != "" && v.Reason != c.reason) {
			t.Errorf("%s %s: got %s %s %q", c.typ, c.payload, v.Status, v.Engine, v.Reason)
		}
		if (ev.Error == nil) != (c.code == "") || ev.Error != nil && ev.Error.Code != c.code {
			t.Errorf("%s: error %+v, want %q", c.typ, ev.Error, c.code)
		}
		if !strings.HasPrefix(v.Attestation, "a2a.") || !strings.HasPrefix(v.PayloadDigest, "sha256:") || v.Boundary != "org_1" {
			t.Errorf("%s: attestation %q digest %q boundary %q", c.typ, v.Attestation, v.PayloadDigest, v.Boundary)
		}
		if !strings.HasPrefix(v.TraceID, "a2a_") || len(v.TraceID) != 4+24 || v.TraceID != A2ATraceIDFor(ev.Command.Request) {
			t.Errorf("derived trace id %q", v.TraceID)
		}
	}
	blocked := g.events[3].A2AVerdict
	if blocked.Details == nil || blocked.Details.ClaimedTotal != "999.99" || blocked.Details.ComputedTotal != "150.00" {
		t.Errorf("finance details %+v", blocked.Details)
	}
	if d := g.events[4].A2AVerdict.Details; d == nil || len(d.Contradictions) != 1 || d.Contradictions[0] != "budget_approved" {
		t.Errorf("logic details %+v", d)
	}
}

// The trust boundary in the seed's order: sender blocked, receiver
// blocked, pair blocked, not allowlisted (both must be: fail closed), and
// gate-wide rules (the admin's "*" boundary, the configured allowlist)
// apply to every boundary.
func TestA2ATrustBoundaryOrder(t *testing.T) {
	g := newGate(t)
	general := `{"message":"hi"}`
	send := func(from, to string) *A2AVerdict {
		return verdictOf(t, g.exec(a2aMsg(from, to, a2a.PayloadGeneral, general)))
	}
	expect := func(v *A2AVerdict, status a2a.Status, reason string) {
		t.Helper()
		if v.Status != status || !strings.Contains(v.Reason, reason) {
			t.Fatalf("got %s %q, want %s %q", v.Status, v.Reason, status, reason)
		}
		if status == a2a.StatusBlocked && v.Engine != a2a.EngineTrust {
			t.Fatalf("engine %s", v.Engine)
		}
	}
	expect(send("a", "b"), a2a.StatusBlocked, "sender 'a' is not allowlisted")
	g.trustAll("a")
	expect(send("a", "b"), a2a.StatusBlocked, "receiver 'b' is not allowlisted")
	g.trustAll("b")
	expect(send("a", "b"), a2a.StatusForwarded, "passthrough")
	g.exec(boundary("org_1", A2AOpBlockPair, "", "a", "b"))
	expect(send("a", "b"), a2a.StatusBlocked, "pair 'a' -> 'b' is blocked")
	expect(send("b", "a"), a2a.StatusForwarded, "")
	g.exec(boundary("org_1", A2AOpBlock, "a", "", ""))
	expect(send("b", "a"), a2a.StatusBlocked, "receiver 'a' is blocked")
	expect(send("a", "b"), a2a.StatusBlocked, "sender 'a' is blocked")
	g.exec(boundary("org_1", A2AOpUnblock, "a", "", ""))
	g.exec(boundary("org_1", A2AOpUnblockPair, "", "a", "b"))
	expect(send("a", "b"), a2a.StatusForwarded, "")
	// The admin's boundary is gate-wide: its block applies to org_1.
	if ev := g.exec(boundary(AdminPrincipal, A2AOpBlock, "b", "", "")); ev.Type != EvA2ABoundaryChanged {
		t.Fatalf("admin block: %+v", ev.Error)
	}
	expect(send("a", "b"), a2a.StatusBlocked, "receiver 'b' is blocked")
	// Another principal's boundary does not trust org_1's agents.
	cmd := a2aMsg("a", "c", a2a.PayloadGeneral, general)
	cmd.Principal = "org_2"
	expect(verdictOf(t, g.exec(cmd)), a2a.StatusBlocked, "sender 'a' is not allowlisted")
	// The configured allowlist is gate-wide; default_allow lifts strict mode.
	cfg := DefaultConfig()
	a := DefaultA2AConfig()
	a.TrustedAgents = []string{"c"}
	cfg.A2A = &a
	if ev := g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}}); ev.Type != EvConfigured {
		t.Fatalf("configure: %+v", ev.Error)
	}
	expect(send("a", "c"), a2a.StatusForwarded, "")
	a.DefaultAllow = true
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	expect(send("x", "y"), a2a.StatusForwarded, "")
	expect(send("x", "b"), a2a.StatusBlocked, "receiver 'b' is blocked")
}

// Who may change a boundary, and what a change must name.
func TestA2ABoundaryCommands(t *testing.T) {
	g := newGate(t)
	for _, c := range []struct {
		cmd  *Command
		code Code
	}{
		{&Command{Type: CmdA2ABoundary, TokenHash: strings.Repeat("a", 64), A2ABoundary: &A2ABoundaryChange{Op: A2AOpTrust, Agent: "x"}}, CodeForbidden},
		{&Command{Type: CmdA2ABoundary, A2ABoundary: &A2ABoundaryChange{Op: A2AOpTrust, Agent: "x"}}, CodeMissingAPIKey},
		{&Command{Type: CmdA2ABoundary, Principal: "org_1"}, CodeMissingField},
		{boundary("org_1", "promote", "x", "", ""), CodeInvalidRequest},
		{boundary("org_1", "", "x", "", ""), CodeMissingField},
		{boundary("org_1", A2AOpTrust, "", "", ""), CodeMissingField},
		{boundary("org_1", A2AOpTrust, "x", "s", ""), CodeInvalidRequest},
		{boundary("org_1", A2AOpBlockPair, "x", "s", "r"), CodeInvalidRequest},
		{boundary("org_1", A2AOpBlockPair, "", "s", ""), CodeMissingField},
		{boundary("org_1", A2AOpBlock, "a\x00b", "", ""), CodeInvalidRequest},
		{boundary("org_1", A2AOpBlock, strings.Repeat("é", 257), "", ""), CodeInvalidRequest},
	} {
		ev := g.exec(c.cmd)
		if ev.Type != EvCommandRejected || ev.Error.Code != c.code {
			t.Errorf("%+v: got %s %+v, want %s", c.cmd.A2ABoundary, ev.Type, ev.Error, c.code)
		}
	}
	g.trustAll("b", "a", "c", "a")
	if got := g.s.A2A.Boundaries["org_1"].Trusted; strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("trusted %v", got)
	}
	g.exec(boundary("org_1", A2AOpUntrust, "b", "", ""))
	g.exec(boundary("org_1", A2AOpUntrust, "a", "", ""))
	g.exec(boundary("org_1", A2AOpUntrust, "c", "", ""))
	if _, ok := g.s.A2A.Boundaries["org_1"]; ok {
		t.Fatalf("an empty boundary is kept: %+v", g.s.A2A.Boundaries)
	}
}

// An agent token sends only its own agent's messages, checked against its
// principal's boundary; a wrong token is refused with the payload withheld.
func TestA2AAgentTokenCredentials(t *testing.T) {
	g := newGate(t)
	g.s.Config = DefaultConfig()
	agent := g.register("sender", "autonomous", nil, Limits{}, Permissions{})
	g.trustAll(agent, "treasury")
	cmd := a2aMsg(agent, "treasury", a2a.PayloadGeneral, `{"m":1}`)
	cmd.Principal, cmd.AgentID, cmd.TokenHash = "", agent, tokenHash("sender")
	if v := verdictOf(t, g.exec(cmd)); v.Status != a2a.StatusForwarded || v.Boundary != "org_1" {
		t.Fatalf("own message: %+v", v)
	}
	cmd = a2aMsg("someone-else", "treasury", a2a.PayloadGeneral, `{"m":1}`)
	cmd.Principal, cmd.AgentID, cmd.TokenHash = "", agent, tokenHash("sender")
	if ev := g.exec(cmd); ev.Type != EvCommandRejected || ev.Error.Code != CodeForbidden {
		t.Fatalf("another sender: %s %+v", ev.Type, ev.Error)
	}
	cmd = a2aMsg(agent, "treasury", a2a.PayloadGeneral, `{"secret":"x"}`)
	cmd.Principal, cmd.AgentID, cmd.TokenHash = "", agent, tokenHash("wrong")
	ev := g.exec(cmd)
	if ev.Type != EvCommandRejected || ev.Error.Code != CodeInvalidAgentToken || ev.Command.A2A != nil || ev.Command.Withheld == nil {
		t.Fatalf("wrong token: %s %+v %+v", ev.Type, ev.Error, ev.Command)
	}
	// The withheld refusal re-decides to the same bytes.
	again := Decide(g.s, Env{Now: ev.Time, Seq: ev.Seq, Partition: ev.Partition, Signer: hashSigner{}}, ev.Command)
	a, _ := json.Marshal(ev)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Fatalf("withheld refusal re-decided\n%s\n%s", b, a)
	}
	cmd = a2aMsg(agent, "treasury", a2a.PayloadGeneral, `{"m":1}`)
	cmd.Principal = ""
	if ev := g.exec(cmd); ev.Type != EvCommandRejected || ev.Error.Code != CodeMissingAPIKey {
		t.Fatalf("no credentials: %s %+v", ev.Type, ev.Error)
	}
}

// The token bucket of a pair: burst messages pass, the next is rate
// limited with the wait until a token is back, which the refill then
// brings; a rate-limited message takes no token.
func TestA2ARateLimit(t *testing.T) {
	g := newGate(t)
	cfg := DefaultConfig()
	a := DefaultA2AConfig()
	a.RatePerMinute, a.Burst, a.DefaultAllow = 6, 3, true
	cfg.A2A = &a
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	send := func() *Event { return g.exec(a2aMsg("a", "b", a2a.PayloadGeneral, `{"m":1}`)) }
	for i := range 3 {
		if v := verdictOf(t, send()); v.Status != a2a.StatusForwarded {
			t.Fatalf("message %d: %+v", i, v)
		}
	}
	ev := send()
	v := verdictOf(t, ev)
	if v.Status != a2a.StatusRateLimited || v.RetryAfterMs != 10_000 || ev.Error.Code != CodeA2ARateLimited || v.Attestation == "" {
		t.Fatalf("fourth: %+v %+v", v, ev.Error)
	}
	// Another pair has its own bucket; another boundary too.
	if v := verdictOf(t, g.exec(a2aMsg("b", "a", a2a.PayloadGeneral, `{}`))); v.Status != a2a.StatusForwarded {
		t.Fatalf("other pair: %+v", v)
	}
	other := a2aMsg("a", "b", a2a.PayloadGeneral, `{}`)
	other.Principal = "org_2"
	if v := verdictOf(t, g.exec(other)); v.Status != a2a.StatusForwarded || v.Boundary != "org_2" {
		t.Fatalf("the same pair in another tenant's boundary: %+v", v)
	}
	g.now = g.now.Add(9 * time.Second)
	if v := verdictOf(t, send()); v.Status != a2a.StatusRateLimited || v.RetryAfterMs != 1000 {
		t.Fatalf("after 9s: %+v", v)
	}
	g.now = g.now.Add(time.Second)
	if v := verdictOf(t, send()); v.Status != a2a.StatusForwarded {
		t.Fatalf("after 10s: %+v", v)
	}
	// Idle and full again: the pair's bucket is evicted at the next event.
	g.now = g.now.Add(5 * time.Minute)
	pair := A2APair{Boundary: "org_1", A2AAgents: A2AAgents{Sender: "a", Receiver: "b"}}
	if got := g.s.A2AEvictions(g.now); len(got) != 3 {
		t.Fatalf("evictable %v", got)
	}
	g.exec(boundary("org_1", A2AOpTrust, "z", "", ""))
	if g.s.A2A.Buckets[pair] != nil || len(g.s.A2A.Buckets) != 0 {
		t.Fatalf("idle buckets kept: %v", g.s.A2A.BucketList())
	}
}

// A signer that cannot sign A2A verdicts, or fails, turns the verdict into
// an error without attestation (fail closed); shadow mode forwards a
// message whose engine erred, and says so.
func TestA2AFailClosed(t *testing.T) {
	for _, s := range []Signer{nil, plainSigner{}, failingSigner{}} {
		g := newGate(t)
		g.signer = s
		cfg := DefaultConfig()
		a := DefaultA2AConfig()
		a.DefaultAllow = true
		cfg.A2A = &a
		g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
		ev := g.exec(a2aMsg("a", "b", a2a.PayloadGeneral, `{}`))
		v := verdictOf(t, ev)
		if v.Status != a2a.StatusError || v.Attestation != "" || ev.Error.Code != CodeA2AAttestation {
			t.Errorf("signer %T: %+v %+v", s, v, ev.Error)
		}
	}
	g := newGate(t)
	cfg := DefaultConfig()
	a := DefaultA2AConfig()
	a.DefaultAllow = true
	cfg.A2A = &a
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	code := func() *Command {
		c := a2aMsg("a", "b", a2a.PayloadCode, `{"code":"x = 1"}`)
		c.Verdict = &EngineVerdict{Engine: "code", Status: engines.Error, Reason: "engine crashed"}
		return c
	}
	ev := g.exec(code())
	if v := verdictOf(t, ev); v.Status != a2a.StatusError || ev.Error.Code != CodeA2AEngineError || v.Details.EngineError != "engine crashed" {
		t.Fatalf("block_on_error: %+v %+v", v, ev.Error)
	}
	a.BlockOnError = false
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	ev = g.exec(code())
	if v := verdictOf(t, ev); v.Status != a2a.StatusForwarded || !v.Shadow || ev.Error != nil || v.Attestation == "" {
		t.Fatalf("shadow: %+v %+v", v, ev.Error)
	}
	// A severe finding of the code engine blocks what the regex passed.
	c := a2aMsg("a", "b", a2a.PayloadCode, `{"code":"x = 1"}`)
	c.Verdict = &EngineVerdict{Engine: "code", Status: engines.Blocked, Reason: "dynamic import",
		Findings: []engines.Finding{{Rule: "py.import", Severity: "critical", Message: "dynamic import"}}}
	ev = g.exec(c)
	if v := verdictOf(t, ev); v.Status != a2a.StatusBlocked || ev.Error.Code != CodeA2ACode || len(v.Details.Findings) != 1 {
		t.Fatalf("engine finding: %+v %+v", v, ev.Error)
	}
	// Bypass agents skip the guards (not the trust boundary).
	a.BypassAgents = []string{"a"}
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	ev = g.exec(a2aMsg("a", "b", a2a.PayloadFinancial, strings.Replace(finPayload, "%s", "1.00", 1)))
	if v := verdictOf(t, ev); v.Status != a2a.StatusForwarded || v.Engine != a2a.EngineBypass {
		t.Fatalf("bypass: %+v", v)
	}
}

// Malformed messages and payloads a guard cannot read are refusals.
func TestA2ARefusals(t *testing.T) {
	g := newGate(t)
	g.trustAll("a", "b")
	for _, c := range []struct {
		cmd  *Command
		code Code
	}{
		{&Command{Type: CmdA2AMessage, Principal: "org_1"}, CodeMissingField},
		{a2aMsg("", "b", a2a.PayloadGeneral, `{}`), CodeInvalidRequest},
		{a2aMsg("a", "b", "poetry", `{}`), CodeUnsupportedType},
		{a2aMsg("a", "b", a2a.PayloadGeneral, `[1]`), CodeInvalidRequest},
		{a2aMsg("a", "b", a2a.PayloadFinancial, `{"data":{"claimed_total":"NaN","line_items":[]}}`), CodeInvalidRequest},
	} {
		ev := g.exec(c.cmd)
		if ev.Type != EvCommandRejected || ev.Error.Code != c.code || ev.A2AVerdict != nil {
			t.Errorf("%+v: got %s %+v, want %s", c.cmd.A2A, ev.Type, ev.Error, c.code)
		}
	}
	if g.s.A2A != nil && len(g.s.A2A.Buckets) != 0 {
		t.Fatalf("a refusal took a token: %v", g.s.A2A.BucketList())
	}
}

// The A2A state survives a restart: its JSON (the projections' form)
// restores the same boundaries, buckets and LRU order, and Clone copies it
// deeply.
func TestA2AStateRestores(t *testing.T) {
	g := newGate(t)
	g.trustAll("a", "b", "c")
	g.exec(boundary("org_1", A2AOpBlockPair, "", "c", "a"))
	for _, p := range [][2]string{{"a", "b"}, {"b", "c"}, {"a", "b"}, {"c", "b"}} {
		g.exec(a2aMsg(p[0], p[1], a2a.PayloadGeneral, `{}`))
		g.now = g.now.Add(time.Second)
	}
	want := stateJSON(t, g.s)
	var back State
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if got := stateJSON(t, &back); !bytes.Equal(got, want) {
		t.Fatalf("restored\n%s\nwant\n%s", got, want)
	}
	order := func(s *State) string {
		var out []string
		for _, b := range s.A2A.BucketList() {
			out = append(out, b.Pair.Sender+">"+b.Pair.Receiver)
		}
		return strings.Join(out, " ")
	}
	if got := order(&back); got != "b>c a>b c>b" {
		t.Fatalf("LRU order %q", got)
	}
	c := g.s.Clone()
	if got := stateJSON(t, c); !bytes.Equal(got, want) {
		t.Fatalf("clone differs")
	}
	g.exec(boundary("org_1", A2AOpTrust, "d", "", ""))
	g.exec(a2aMsg("b", "c", a2a.PayloadGeneral, `{}`))
	if got := stateJSON(t, c); !bytes.Equal(got, want) {
		t.Fatalf("the clone shares state with the original")
	}
}

// Past MaxA2ABuckets a new pair is refused until the least recently used
// bucket can be evicted (fail closed: no map spray).
func TestA2ABucketBound(t *testing.T) {
	s := NewState()
	cfg := DefaultA2AConfig()
	s.Config.A2A = &cfg
	s.A2A = &A2AState{}
	bs := make([]A2ABucket, MaxA2ABuckets)
	for i := range bs {
		// Twenty tenants' buckets, each within MaxA2ABucketsPerBoundary.
		bs[i] = A2ABucket{Pair: A2APair{Boundary: "org_" + itoa(i%20), A2AAgents: A2AAgents{Sender: "s" + itoa(i), Receiver: "r"}},
			Bucket: a2a.Bucket{Spent: a2a.TokenUnit, Last: t0.UnixNano() + int64(i)}, LastSeq: uint64(i + 1)}
	}
	s.A2A.RestoreBuckets(bs)
	s.A2A.Boundaries = map[string]*A2ABoundary{}
	s.Config.A2A.DefaultAllow = true
	env := Env{Now: t0.Add(time.Minute), Seq: MaxA2ABuckets + 1, Signer: hashSigner{}}
	cmd := a2aMsg("new", "r", a2a.PayloadGeneral, `{}`)
	cmd.Principal, cmd.Request = AdminPrincipal, RequestID{Source: "t", ID: "1"}
	v := Decide(s, env, cmd).A2AVerdict
	if v.Status != a2a.StatusRateLimited || v.RetryAfterMs != 4*60*1000 {
		t.Fatalf("over the bound: %+v", v)
	}
	env.Now = t0.Add(5 * time.Minute)
	ev := Decide(s, env, cmd)
	if ev.A2AVerdict.Status != a2a.StatusForwarded {
		t.Fatalf("with an evictable bucket: %+v", ev.A2AVerdict)
	}
	Apply(s, ev)
	if len(s.A2A.Buckets) != MaxA2ABuckets || s.A2A.Buckets[bs[0].Pair] != nil || s.A2A.BucketList()[MaxA2ABuckets-1].Pair.Sender != "new" {
		t.Fatalf("%d buckets, the oldest kept or the new one not last", len(s.A2A.Buckets))
	}
}

func itoa(i int) string { return hex.EncodeToString([]byte{byte(i >> 16), byte(i >> 8), byte(i)}) }

// Equal compares every field of A2AConfig: one that differs makes two
// configurations unequal (a field added without Equal fails here).
func TestA2AConfigEqual(t *testing.T) {
	base := DefaultA2AConfig()
	base.TrustedAgents, base.BypassAgents = []string{"a"}, []string{"b"}
	typ := reflect.TypeFor[A2AConfig]()
	for i := range typ.NumField() {
		c := base
		c.TrustedAgents, c.BypassAgents = slices.Clone(base.TrustedAgents), slices.Clone(base.BypassAgents)
		f := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"other"}))
		default:
			t.Fatalf("field %s: kind %s", typ.Field(i).Name, f.Kind())
		}
		if c.Equal(&base) || !base.Equal(&base) {
			t.Errorf("field %s: not compared", typ.Field(i).Name)
		}
		x, y := Config{A2A: &c}, Config{A2A: &base}
		if x.Equal(y) || (Config{}).Equal(y) || !(Config{}).Equal(Config{}) {
			t.Errorf("Config.Equal on %s", typ.Field(i).Name)
		}
	}
}

// One tenant cannot take the buckets of the others: a boundary holds at
// most MaxA2ABucketsPerBoundary of them (a principal that trusts many
// agents, or the gate in default_allow, would otherwise fill
// MaxA2ABuckets and rate limit every other tenant's new pairs until its
// own go idle). Its new pairs are then rate limited until its own buckets
// are evicted; another boundary's new pair is not.
func TestA2ABucketsPerBoundary(t *testing.T) {
	s := NewState()
	cfg := DefaultA2AConfig()
	cfg.DefaultAllow = true
	s.Config.A2A = &cfg
	env := Env{Now: t0, Signer: hashSigner{}}
	send := func(principal, sender string) *Event {
		env.Seq++
		cmd := a2aMsg(sender, "r", a2a.PayloadGeneral, `{}`)
		cmd.Principal, cmd.Request = principal, RequestID{Source: "t", ID: itoa(int(env.Seq))}
		ev := Decide(s, env, cmd)
		ev.Seq, ev.Time = env.Seq, env.Now
		Apply(s, ev)
		return ev
	}
	n := 0
	for ; n <= MaxA2ABuckets; n++ {
		if v := send("org_evil", "s"+itoa(n)).A2AVerdict; v.Status != a2a.StatusForwarded {
			if v.Status != a2a.StatusRateLimited || v.RetryAfterMs != int64(5*time.Minute/time.Millisecond) {
				t.Fatalf("pair %d: %+v", n, v)
			}
			break
		}
	}
	if n != MaxA2ABucketsPerBoundary || len(s.A2A.Buckets) != MaxA2ABucketsPerBoundary {
		t.Fatalf("one boundary took %d buckets (%d in all), want at most %d", n, len(s.A2A.Buckets), MaxA2ABucketsPerBoundary)
	}
	if v := send("org_1", "a").A2AVerdict; v.Status != a2a.StatusForwarded {
		t.Fatalf("another tenant's new pair: %+v", v)
	}
	// The full boundary's pairs that hold a bucket still pass, and once
	// its buckets are idle (and full) a new one gets its own.
	if v := send("org_evil", "s"+itoa(0)).A2AVerdict; v.Status != a2a.StatusForwarded {
		t.Fatalf("a pair with a bucket: %+v", v)
	}
	env.Now = env.Now.Add(6 * time.Minute)
	if v := send("org_evil", "new").A2AVerdict; v.Status != a2a.StatusForwarded {
		t.Fatalf("once idle buckets are evicted: %+v", v)
	}
	// The counts follow a snapshot's restore.
	c := s.A2A.clone()
	if !reflect.DeepEqual(c.perBoundary, s.A2A.perBoundary) || c.perBoundary["org_evil"] != 1 {
		t.Fatalf("restored counts %v, folded %v", c.perBoundary, s.A2A.perBoundary)
	}
}

// A retry after never overflows into a negative retry_after_ms, however
// long the configured idle_evict (a Duration up to 292 years).
func TestA2ARetryAfterSaturates(t *testing.T) {
	s := NewState()
	cfg := DefaultA2AConfig()
	cfg.DefaultAllow, cfg.IdleEvict = true, Duration(math.MaxInt64)
	s.Config.A2A = &cfg
	env := Env{Now: t0, Signer: hashSigner{}}
	var v *A2AVerdict
	for n := 0; n <= MaxA2ABucketsPerBoundary; n++ {
		env.Seq++
		cmd := a2aMsg("s"+itoa(n), "r", a2a.PayloadGeneral, `{}`)
		cmd.Principal, cmd.Request = "org_1", RequestID{Source: "t", ID: itoa(int(env.Seq))}
		ev := Decide(s, env, cmd)
		ev.Seq, ev.Time = env.Seq, env.Now
		Apply(s, ev)
		v = ev.A2AVerdict
	}
	if v.Status != a2a.StatusRateLimited || v.RetryAfterMs != math.MaxInt64/int64(time.Millisecond)+1 {
		t.Fatalf("retry after %d ms: %+v", v.RetryAfterMs, v)
	}
}
