package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const testCard = "4111 1111 1111 1111"

// hasFactor reports whether the decision's risk assessment lists factor.
func hasFactor(d *ActionDecided, factor string) bool {
	ra, _ := AssessDecision(d)
	return slices.ContainsFunc(ra.Factors, func(f RiskFactor) bool { return f.Factor == factor })
}

// policyCheck returns the decision's policy check named policy.
func policyCheck(d *ActionDecided, policy string) *PolicyCheck {
	_, checks := AssessDecision(d)
	for i := range checks {
		if checks[i].Policy == policy {
			return &checks[i]
		}
	}
	return nil
}

// QWED-Agent spec v1.1 §1.3 (pre-execution verification of agent outputs)
// and §5.2 no_pii_leakage: an action's declared output is scanned before
// it runs. A card number, IBAN, SSN, credential or private key in it denies
// with QWED-SEC-003 naming the kind and "output", never the value; an
// address or a phone number is a finding only. Every finding is in the
// verification block and makes the pii_in_content factor of §5.2.
func TestAgentSpec_5_2_NoPIILeakageInDeclaredOutput_Decide(t *testing.T) {
	g := detectorGate(t)
	cases := []struct {
		name   string
		act    Action
		want   Decision
		kind   string // the blocking kind, "" for none
		pii    []string
		secret string // a value that must appear nowhere in the event's error
	}{
		{"card in an email body", Action{Type: "send_email", Parameters: json.RawMessage(`{"to":"ann@example.com"}`),
			Output: "Your card " + testCard + " was charged."}, Denied, "card_number", []string{"email", "card_number"}, "4111"},
		{"a credential in a computation's output", Action{Type: "calculate", Query: "2+2",
			Output: "token AKIAIOSFODNN7EXAMPLE"}, Denied, "secret", []string{"secret"}, "AKIAIOSFODNN7EXAMPLE"},
		{"a private key written to a file", Action{Type: "write_file", Target: "/srv/out/key.txt",
			Output: "-----BEGIN RSA PRIVATE KEY-----\nMIIE"}, Denied, "private_key", []string{"private_key"}, "MIIE"},
		{"an address and a phone number pass", Action{Type: "send_message",
			Output: "Write to bob@example.org or call +44 20 7946 0958"}, Approved, "", []string{"email", "phone"}, ""},
		{"a clean output passes", Action{Type: "send_message", Output: "Your order #12345 has shipped."}, Approved, "", nil, ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "out" + strconv.Itoa(i)
			id := g.register(name, "trusted", trustPtr(TrustTrusted), Limits{}, Permissions{})
			ev := g.exec(actionCmd(id, name, 1, c.act))
			if decision(ev) != c.want {
				t.Fatalf("%s %v; want %s", decision(ev), ev.Error, c.want)
			}
			var kinds []string
			for _, f := range ev.Decided.Verification.PII {
				kinds = append(kinds, f.Kind)
			}
			if !slices.Equal(kinds, c.pii) {
				t.Errorf("verification.pii kinds %v; want %v", kinds, c.pii)
			}
			if len(c.pii) > 0 != hasFactor(ev.Decided, "pii_in_content") {
				t.Errorf("pii_in_content factor present=%v with findings %v", hasFactor(ev.Decided, "pii_in_content"), c.pii)
			}
			pc := policyCheck(ev.Decided, checkNoPII)
			if pc == nil || pc.Passed != (c.kind == "") {
				t.Fatalf("policy check %s: %+v; want passed=%v", checkNoPII, pc, c.kind == "")
			}
			if c.kind == "" {
				return
			}
			if code(ev) != CodePIIDetected || ev.Decided.Verification.Status != StatusBlocked || !ev.Decided.SecurityViolation {
				t.Fatalf("error %+v status %s; want %s, BLOCKED, a security violation", ev.Error, ev.Decided.Verification.Status, CodePIIDetected)
			}
			kinds, _ = ev.Error.Details["kinds"].([]string)
			locs, _ := ev.Error.Details["locations"].([]string)
			if !slices.Contains(kinds, c.kind) || !slices.Contains(locs, "output") {
				t.Errorf("details %v; want kind %s at output", ev.Error.Details, c.kind)
			}
			b, _ := json.Marshal(ev.Error)
			if strings.Contains(string(b), c.secret) {
				t.Errorf("the error holds the value found: %s", b)
			}
		})
	}
}

// QWED-Agent spec v1.1 §5.2's example: a send_email tool call addressed to
// a customer passes no_pii_leakage with the pii_in_content factor (the
// tool call's parameters are its declared output: tool calls have no
// output member of their own).
func TestAgentSpec_5_2_ToolCallParametersArePIIInContent(t *testing.T) {
	g := detectorGate(t)
	id := g.register("mailer", "trusted", trustPtr(TrustTrusted), Limits{}, Permissions{})
	cmd := toolCmd(id, "mailer", "send_email")
	cmd.Tool.ToolCall.Parameters = json.RawMessage(`{"to":"user@example.com","subject":"Your order status","body":"Your order #12345 has shipped..."}`)
	ev := g.exec(cmd)
	if decision(ev) != Approved {
		t.Fatalf("%s %v; want APPROVED", decision(ev), ev.Error)
	}
	if pii := ev.Decided.Verification.PII; len(pii) != 1 || pii[0] != (PIIFinding{Kind: "email", Location: "parameters/to"}) {
		t.Errorf("verification.pii %+v; want the address in parameters/to", pii)
	}
	if !hasFactor(ev.Decided, "pii_in_content") {
		t.Error("no pii_in_content factor")
	}
	if pc := policyCheck(ev.Decided, checkNoPII); pc == nil || !pc.Passed {
		t.Errorf("no_pii_leakage %+v; want passed", pc)
	}
}

// A declared output is part of the request (the attestation's request
// digest binds the output that was approved) but not of the fingerprint of
// QWED-Agent spec v1.1 §9.3, which names its members.
func TestAgentSpec_9_3_DeclaredOutputInRequestDigestNotFingerprint(t *testing.T) {
	a := &VerifyAction{Action: Action{Type: "send_message"}, Context: ActionContext{ConversationID: "c", StepNumber: "1"}}
	b := &VerifyAction{Action: Action{Type: "send_message", Output: "hello"}, Context: a.Context}
	da, _, err1 := actionDigests(a, RequestID{Source: "t", ID: "1"})
	db, _, err2 := actionDigests(b, RequestID{Source: "t", ID: "1"})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if da.fingerprint != db.fingerprint || da.request == db.request {
		t.Errorf("fingerprints %s %s, request digests %s %s: want the same fingerprint and different digests",
			da.fingerprint, db.fingerprint, da.request, db.request)
	}
}

// A log written before Config.OutputScan re-decides a command carrying an
// output as the gate that wrote it refused the member: unknown, QWED-REQ-001,
// before anything else; and records no findings of its PII scan.
func TestAgentSpec_5_2_DeclaredOutputBeforeTheSwitch(t *testing.T) {
	g := detectorGate(t)
	cfg := DefaultConfig()
	cfg.OutputScan = false
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
	id := g.register("old", "trusted", trustPtr(TrustTrusted), Limits{}, Permissions{})
	ev := g.exec(actionCmd(id, "old", 1, Action{Type: "send_message", Output: "hi"}))
	want := Error{Code: CodeInvalidRequest, Message: "unknown member action.output", Details: map[string]any{"field": "action.output", "reason": "unknown"}}
	if ev.Type != EvCommandRejected || ev.Error == nil || ev.Error.Code != want.Code || ev.Error.Message != want.Message ||
		ev.Error.Details["field"] != "action.output" || ev.Error.Details["reason"] != "unknown" {
		t.Fatalf("%s %+v; want %+v", ev.Type, ev.Error, want)
	}
	ev = g.exec(actionCmd(id, "old", 1, Action{Type: "send_email", Parameters: json.RawMessage(`{"to":"ann@example.com"}`)}))
	if decision(ev) != Approved || ev.Decided.Verification.PII != nil {
		t.Fatalf("%s pii %+v; want APPROVED without recorded findings", decision(ev), ev.Decided.Verification.PII)
	}
	act := g.approve(t, id, "old", 2)
	ev = g.exec(execCmd(id, "old", LogExecution{ActionID: act}, ScanOutput("x")))
	if ev.Type != EvCommandRejected || ev.Error.Message != "unknown member output" || ev.Error.Details["field"] != "output" {
		t.Fatalf("%s %+v; want the unknown member output", ev.Type, ev.Error)
	}
}

// approve decides an approved calculate action at step and returns its ID.
func (g *gate) approve(t *testing.T, id, name string, step int) string {
	t.Helper()
	ev := g.exec(actionCmd(id, name, step, Action{Type: "calculate", Query: strconv.Itoa(step) + "+1"}))
	if decision(ev) != Approved {
		t.Fatalf("%s %v; want APPROVED", decision(ev), ev.Error)
	}
	return ev.Decided.ActionID
}

func execCmd(id, name string, x LogExecution, scan *OutputScan) *Command {
	x.Success = true
	return &Command{Type: CmdLogExecution, AgentID: id, TokenHash: tokenHash(name), Execution: &x, OutputScan: scan}
}

// QWED-Agent spec v1.1 §7.1 (execution.result_hash) and §5.2
// no_pii_leakage after the fact: an execution log may carry the output;
// the command holds its scan, never its text. A card number in it flags
// the execution (pii_violation), which is recorded all the same; the result
// hash defaults to the output's SHA-256, and one that is not it is refused
// with nothing recorded.
func TestAgentSpec_7_1_ExecutionOutputScanned(t *testing.T) {
	g := detectorGate(t)
	id := g.register("runner", "trusted", trustPtr(TrustTrusted), Limits{}, Permissions{})
	out := "charged " + testCard + " for ann@example.com"
	sum := sha256.Sum256([]byte(out))
	hexSum := hex.EncodeToString(sum[:])

	act := g.approve(t, id, "runner", 1)
	ev := g.exec(execCmd(id, "runner", LogExecution{ActionID: act, ResultHash: "sha256:" + strings.Repeat("0", 64)}, ScanOutput(out)))
	if ev.Type != EvCommandRejected || code(ev) != CodeInvalidRequest || ev.Error.Details["field"] != "result_hash" {
		t.Fatalf("%s %+v; want QWED-REQ-001 on result_hash", ev.Type, ev.Error)
	}
	if g.s.Agents[id].OpenActions[act] == nil {
		t.Fatal("a refused log closed the action")
	}
	ev = g.exec(execCmd(id, "runner", LogExecution{ActionID: act}, ScanOutput(out)))
	if ev.Type != EvExecutionLogged {
		t.Fatalf("%s %v; want the execution recorded", ev.Type, ev.Error)
	}
	x := ev.Executed
	if !x.PIIViolation || x.ResultHash != "sha256:"+hexSum || len(x.OutputFindings) != 2 ||
		x.OutputFindings[0] != (PIIFinding{Kind: "card_number", Location: "output", Offset: 8}) || x.OutputFindings[1].Kind != "email" {
		t.Fatalf("execution %+v; want flagged, the output's hash, the card and the address", x)
	}
	_, body := Reply(ev)
	if r := body.(ExecutionReply); !r.PIIViolation || r.ResultHash != x.ResultHash || len(r.OutputFindings) != 2 {
		t.Errorf("reply %+v does not carry the event's findings", r)
	}
	if b, _ := json.Marshal(ev); strings.Contains(string(b), "4111") || strings.Contains(string(b), "ann@") {
		t.Errorf("the event holds the output: %s", b)
	}

	// An address alone is a finding, not a violation; a matching hash in
	// another spelling is recorded as sent.
	act = g.approve(t, id, "runner", 2)
	mail := "sent to ann@example.com"
	ms := sha256.Sum256([]byte(mail))
	sent := strings.ToUpper(hex.EncodeToString(ms[:]))
	ev = g.exec(execCmd(id, "runner", LogExecution{ActionID: act, ResultHash: sent}, ScanOutput(mail)))
	if ev.Type != EvExecutionLogged || ev.Executed.PIIViolation || len(ev.Executed.OutputFindings) != 1 || ev.Executed.ResultHash != sent {
		t.Fatalf("%s %+v %v; want recorded unflagged with its finding and the hash sent", ev.Type, ev.Executed, ev.Error)
	}

	// A scan the gate cannot have made is refused.
	act = g.approve(t, id, "runner", 3)
	ev = g.exec(execCmd(id, "runner", LogExecution{ActionID: act}, &OutputScan{Bytes: 1, SHA256: "nothex"}))
	if ev.Type != EvCommandRejected || code(ev) != CodeInvalidRequest {
		t.Fatalf("%s %+v; want QWED-REQ-001", ev.Type, ev.Error)
	}
	if !DefaultConfig().OutputScan {
		t.Fatal("a new gate must scan outputs")
	}
}

// The declared output is bounded like the parameters (QWED-REQ-004).
func TestAgentSpec_5_2_DeclaredOutputBounded(t *testing.T) {
	cmd := actionCmd("agent_1", "a", 1, Action{Type: "send_message", Output: strings.Repeat("a", MaxOutputBytes)})
	if err := CheckBounds(cmd); err != nil {
		t.Fatalf("an output at the limit: %v", err)
	}
	cmd.Verify.Action.Output += "a"
	if err := CheckBounds(cmd); err == nil || err.Code != CodeTooLong || err.Details["field"] != "action.output" {
		t.Fatalf("%+v; want QWED-REQ-004 on action.output", err)
	}
}

// outputText is n bytes of a reply to a customer: prose with an address, a
// phone number and order numbers every few lines, as an agent's output is.
func outputText(n int) string {
	const para = "Dear customer, your order #12345 has shipped and should arrive within 3-5 business days. " +
		"If anything is missing, write to support@example.com or call +44 20 7946 0958; quote reference " +
		"A7-20261126 so that we find your parcel. Thank you for shopping with us.\n"
	return strings.Repeat(para, n/len(para)+1)[:n]
}

// BenchmarkScanOutput measures the PII scan of an execution's output
// (ScanOutput: SHA-256 and guard.Scan), per output size: its cost per KiB
// is the MB/s column.
func BenchmarkScanOutput(b *testing.B) {
	for _, kib := range []int{1, 16, 64} {
		text := outputText(kib << 10)
		b.Run(strconv.Itoa(kib)+"KiB", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if s := ScanOutput(text); len(s.Findings) == 0 {
					b.Fatal("no findings")
				}
			}
		})
	}
}

// BenchmarkDecideDeclaredOutput measures Decide on an approved
// send_message whose declared output is 1 KiB or 64 KiB (the bound), and
// without one: what a declared output adds to the single writer.
func BenchmarkDecideDeclaredOutput(b *testing.B) {
	g := newGate(b)
	g.signer = nil
	g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: DefaultConfig()}})
	id := g.register("bench", "trusted", trustPtr(TrustTrusted), Limits{}, Permissions{})
	steps := make([]json.Number, 49)
	for i := range steps {
		steps[i] = json.Number(strconv.Itoa(i + 1))
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"none", 0}, {"1KiB", 1 << 10}, {"64KiB", MaxOutputBytes}} {
		b.Run(c.name, func(b *testing.B) {
			cmd := actionCmd(id, "bench", 1, Action{Type: "send_message", Output: outputText(c.n)})
			cmd.Request = RequestID{Source: "bench", ID: "r"}
			env := Env{Now: g.now, Seq: 1000, Partition: 1}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				cmd.Verify.Context.StepNumber = steps[i%len(steps)]
				i++
				if ev := Decide(g.s, env, cmd); ev.Decided == nil || ev.Decided.Decision != Approved {
					b.Fatalf("%s %v", decision(ev), ev.Error)
				}
			}
		})
	}
}

// No number of addresses hides a card number after them: the scan under
// Config.OutputScan reads the declared output whole (guard.ScanMode.All), and
// so an execution's output.
func TestAgentSpec_5_2_NoPIILeakagePastTheFindingsBound(t *testing.T) {
	g := detectorGate(t)
	id := g.register("padder", "trusted", trustPtr(TrustTrusted), Limits{}, Permissions{})
	padded := strings.Repeat("ann@example.com ", 40) + "card " + testCard
	ev := g.exec(actionCmd(id, "padder", 1, Action{Type: "send_message", Output: padded}))
	if decision(ev) != Denied || code(ev) != CodePIIDetected {
		t.Fatalf("%s %v; want DENIED QWED-SEC-003", decision(ev), ev.Error)
	}
	if s := ScanOutput(padded); !piiViolation(s.Findings) {
		t.Fatalf("execution output findings %+v: no card", s.Findings)
	}
}

// QWED-Agent spec v1.1 §5.2: an output that is a JSON document is also
// read as JSON, and the scan stays within the bound Decide accepts: past
// sixteen escaped addresses, an escaped card number and an escaped key
// are each found once (under their JSON pointer), and a text without an
// escape, or not JSON, is read as text only.
func TestAgentSpec_5_2_JSONEscapedOutputBounded(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`{"to":[`)
	for i := range 20 {
		if i > 0 {
			doc.WriteString(",")
		}
		doc.WriteString(`"u` + strconv.Itoa(i) + `\u0040example.org"`)
	}
	doc.WriteString(`],"card":"\u0034111 1111 1111 1111","key":"AKIA\u0049OSFODNN7EXAMPLE"}`)
	s := ScanOutput(doc.String())
	if len(s.Findings) > maxScanFindings {
		t.Fatalf("%d findings; the bound is %d", len(s.Findings), maxScanFindings)
	}
	var kinds []string
	for _, f := range s.Findings {
		kinds = append(kinds, f.Kind+"@"+f.Location)
	}
	for _, want := range []string{"card_number@output/card", "secret@output/key"} {
		if !slices.Contains(kinds, want) {
			t.Fatalf("findings %v; want %s", kinds, want)
		}
	}
	if _, err := executionOutput(&LogExecution{ActionID: "a"}, s); err != nil {
		t.Fatalf("the gate refuses its own scan: %v", err)
	}
	for _, text := range []string{`{"card":"4111 1111 1111 1111"}`, `not json \u0034111 1111 1111 1111`} {
		if f := ScanOutput(text).Findings; len(f) > 1 || len(f) == 1 && f[0].Location != locOutput {
			t.Fatalf("%s: findings %+v; want the text's only", text, f)
		}
	}
}

// QWED-Agent spec v1.1 §5.2: an output read as JSON names a key holding
// a finding by its index (guard.ScanMode.Keys), so an escaped card number
// that is a key is found and its location does not spell it.
func TestAgentSpec_5_2_JSONOutputKeyRedacted(t *testing.T) {
	s := ScanOutput(`{"a":1,"\u0034111111111111111":"x"}`)
	var kinds []string
	for _, f := range s.Findings {
		kinds = append(kinds, f.Kind+"@"+f.Location)
	}
	if strings.Join(kinds, " ") != "card_number@output/~redacted~1" {
		t.Fatalf("findings %v; want the card at output/~redacted~1", kinds)
	}
}
