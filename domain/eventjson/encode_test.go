package eventjson_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
	"github.com/agentgate/agentgate/streams"
)

// encodesAsMarshal checks AppendEvent against the oracle, json.Marshal,
// on ev: where AppendEvent encodes ev, json.Marshal encodes it to the same
// bytes (after the caller's prefix, which stays); where json.Marshal
// fails, AppendEvent fails; and where AppendEvent fails, it is with an
// *EncodeError and the prefix untouched. It reports whether AppendEvent
// encoded ev.
func encodesAsMarshal(t testing.TB, ev *domain.Event) (encoded bool) {
	t.Helper()
	want, wantErr := json.Marshal(ev)
	prefix := []byte("payload:")
	got, err := eventjson.AppendEvent(prefix, ev)
	var encErr *eventjson.EncodeError
	switch {
	case wantErr != nil && err == nil:
		t.Fatalf("AppendEvent encoded %q where json.Marshal fails: %v", got, wantErr)
	case !bytes.HasPrefix(got, prefix):
		t.Fatalf("AppendEvent lost the prefix: %q", got)
	case err == nil && !eventjson.OracleEqual(got[len(prefix):], want):
		t.Fatalf("AppendEvent differs from json.Marshal:\n got %q\nwant %q", got[len(prefix):], want)
	case err != nil && !errors.As(err, &encErr):
		t.Fatalf("AppendEvent error %T %v, want an *EncodeError", err, err)
	case err != nil && len(got) != len(prefix):
		t.Fatalf("AppendEvent failed but appended %q", got[len(prefix):])
	}
	return err == nil
}

// TestAppendEventMatchesMarshalOnRecordedHistory: every event of the
// recorded seeded history (decided, rejected, registered, executed,
// resolved, expired, checkpoints; see testdata/seeded-history.jsonl.gz),
// decoded as the readers decode it, encodes as json.Marshal encodes it,
// by the fast path, and json.Marshal gives back the recorded bytes.
func TestAppendEventMatchesMarshalOnRecordedHistory(t *testing.T) {
	types := map[domain.EventType]int{}
	history := recordedHistory(t)
	for i, p := range history {
		var ev domain.Event
		if err := json.Unmarshal(p, &ev); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if !encodesAsMarshal(t, &ev) {
			t.Fatalf("seq %d (%s) was refused: %s", ev.Seq, ev.Type, p)
		}
		if got, _ := eventjson.AppendEvent(nil, &ev); !bytes.Equal(got, p) {
			t.Fatalf("seq %d does not re-encode to its recorded bytes:\n got %s\nwant %s", ev.Seq, got, p)
		}
		types[ev.Type]++
	}
	for _, want := range []domain.EventType{domain.EvActionDecided, domain.EvExecutionLogged, domain.EvCommandRejected,
		domain.EvAgentRegistered, domain.EvApprovalResolved, domain.EvLogCheckpointed} {
		if types[want] == 0 {
			t.Errorf("the history holds no %s (%v)", want, types)
		}
	}
	t.Logf("%d events: %v", len(history), types)
}

// testToken is the agent token of the seeded runs.
const testToken = "qwed_agent_encode-test"

// seededWorkerRun drives the real worker (Pebble log, ES256 keyring,
// projections; checkpoints every 40 events) with a seeded random mix of
// every command kind, as handlers' TestDesign2_1_SeededRunThroughTheWorker
// does, plus engine verdicts (verified, corrected, blocked with findings,
// failed, uncertain), tool registries, trust requests, complaints,
// rejections and attested QWED records. It returns every event the worker
// answered and every payload of the log.
func seededWorkerRun(t *testing.T, seed uint64, n int) (answered []*domain.Event, payloads [][]byte) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	// The worker reads the clock on its own goroutine (ticks, batches):
	// the test advances it atomically.
	var nowNanos atomic.Int64
	nowNanos.Store(time.Date(2026, 11, 1, 23, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, nowNanos.Load()).UTC() }
	g, err := embedded.OpenGate(embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Clock: clock,
		Checkpoint: domain.CheckpointPolicy{Events: 40, Interval: domain.Duration(365 * 24 * time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Worker.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Error(err)
		}
		g.Close()
	}()

	tokenHash := command.HashSecret(testToken)
	var agents []string
	var open []string
	steps := map[string]int{}
	reqN := 0
	types := []string{"calculate", "execute_sql", "api_call", "send_email", "read_file", "delete_file", "unknown_thing", "execute_code"}
	queries := []string{"SELECT 1", "2+2", "UPDATE t SET a = 1 WHERE id = 2", "DELETE FROM t", "x < 1 && y > 2", "line\nbreak\u2028"}
	tools := []string{"search", "send_email", "execute_code", "mystery_tool"}
	for i := 0; i < n; i++ {
		if r.IntN(10) == 0 {
			nowNanos.Add(int64(time.Duration(r.IntN(90)) * time.Minute))
		}
		var cmd *domain.Command
		pick := r.IntN(100)
		switch {
		case len(agents) < 2 || pick < 4:
			tl := domain.TrustLevel(r.IntN(4))
			cmd = &domain.Command{Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal,
				Register: &domain.RegisterAgent{
					Agent: domain.AgentInfo{Name: fmt.Sprint("bot-", i), Type: "autonomous", PrincipalID: "org_1",
						Description: "an <agent> & co", Framework: "langchain"},
					Permissions: domain.Permissions{BlockedTools: []string{"mystery_tool"}},
					Budget: domain.Limits{MaxDailyCost: domain.USD(r.IntN(3)+1) * domain.MicrosPerUSD,
						MaxRequestsPerHour: int64(r.IntN(30) + 5), MaxToolCallsPerHour: int64(r.IntN(5) + 1),
						MaxDailyTokens: int64(r.IntN(2)) * 100_000},
					TrustLevel: &tl, TokenHash: tokenHash}}
		case pick < 56:
			a := agents[r.IntN(len(agents))]
			conv := fmt.Sprint("c", r.IntN(3))
			step := steps[a+conv] + 1
			if r.IntN(8) == 0 {
				step = max(1, step-1-r.IntN(2))
			}
			cmd = &domain.Command{Type: domain.CmdVerifyAction, AgentID: a, TokenHash: tokenHash,
				Verify: &domain.VerifyAction{
					Action: domain.Action{Type: types[r.IntN(len(types))], Query: queries[r.IntN(len(queries))],
						EstimatedCost: domain.USD(r.IntN(400_000)), EstimatedTokens: int64(r.IntN(3) * 50)},
					Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(fmt.Sprint(step))},
					Options: domain.Options{RequireAttestation: r.IntN(4) == 0}}}
			if r.IntN(3) == 0 {
				cmd.Verify.Action.Parameters = json.RawMessage(` {"limit": 10, "filter": "<b>"} `)
			}
			if r.IntN(5) == 0 {
				cmd.Verify.Context.PreActionStateHash, cmd.Verify.Context.StateSource = fmt.Sprint("state", r.IntN(2)), "db"
			}
			cmd.Verdict = randomVerdict(r, cmd.Verify.Action.Type)
			if r.IntN(20) == 0 {
				cmd.TokenHash = command.HashSecret("qwed_agent_wrong")
			}
		case pick < 68:
			a := agents[r.IntN(len(agents))]
			cmd = &domain.Command{Type: domain.CmdVerifyToolCall, AgentID: a, TokenHash: tokenHash,
				Tool: &domain.VerifyToolCall{ToolCall: domain.ToolCall{ToolName: tools[r.IntN(len(tools))],
					Parameters: json.RawMessage(`{"to":"x"}`), EstimatedCost: domain.USD(r.IntN(50_000))},
					Justification: "needed"}}
			if r.IntN(2) == 0 {
				cmd.Tool.Context = &domain.ActionContext{ConversationID: "t0", StepNumber: json.Number(fmt.Sprint(i + 1))}
			}
		case pick < 76 && len(open) > 0:
			cmd = &domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1",
				Resolve: &domain.ResolveApproval{ApprovalID: open[r.IntN(len(open))], Approve: r.IntN(2) == 0, Reason: "seeded"}}
		case pick < 85 && len(open) > 0:
			cmd = &domain.Command{Type: domain.CmdLogExecution, AgentID: agents[r.IntN(len(agents))], TokenHash: tokenHash,
				Execution: &domain.LogExecution{ActionID: open[r.IntN(len(open))], Success: r.IntN(4) > 0,
					CostUSD: domain.USD(r.IntN(300_000)), Tokens: int64(r.IntN(500)), ResultHash: "sha256:ab"}}
		case pick < 88:
			cmd = &domain.Command{Type: domain.CmdSuspendAgent, AgentID: agents[r.IntN(len(agents))], Principal: "org_1",
				Suspend: &domain.SuspendAgent{Suspended: r.IntN(3) == 0, Reason: "seeded"}}
		case pick < 90:
			cmd = &domain.Command{Type: domain.CmdSetTrustLevel, AgentID: agents[r.IntN(len(agents))], Principal: "org_1",
				SetTrust: &domain.SetTrustLevel{Level: domain.TrustLevel(r.IntN(4)), Reason: "seeded"}}
		case pick < 92:
			from := domain.TrustLevel(r.IntN(3))
			cmd = &domain.Command{Type: domain.CmdRequestTrust, AgentID: agents[r.IntN(len(agents))], TokenHash: tokenHash,
				Trust: &domain.RequestTrustElevation{Request: "trust_elevation", FromLevel: from, ToLevel: from + 1,
					Justification: "good record", Evidence: domain.TrustEvidence{DaysActive: 0, TotalActions: int64(r.IntN(5)), DenialRate: "0.1"}}}
		case pick < 93:
			cmd = &domain.Command{Type: domain.CmdFileComplaint, AgentID: agents[r.IntN(len(agents))], Principal: "org_1",
				Complaint: &domain.FileComplaint{Reason: "spam & <abuse>"}}
		case pick < 94:
			cmd = &domain.Command{Type: domain.CmdPutToolRegistry, Principal: domain.AdminPrincipal,
				ToolRegistry: &domain.PutToolRegistry{PrincipalID: "org_1", Tools: []domain.ToolSpec{
					{Name: "search", RiskLevel: domain.RiskLow},
					{Name: "send_email", RiskLevel: domain.RiskMedium, RequiresApproval: true},
					{Name: "execute_code", RiskLevel: domain.RiskHigh, RequiresVerification: true, VerificationEngine: "code", SandboxRequired: true}}}}
		case pick < 96:
			cmd = &domain.Command{Type: domain.CmdRejectRequest,
				Reject: &domain.RejectRequest{Error: *domain.Errorf(domain.CodeInvalidAPIKey, "bad key"), Endpoint: "POST /agents/register",
					BodyDigest: strings.Repeat("ab", 32), BodyBytes: int64(r.IntN(5000))}}
		case pick < 98:
			cmd = &domain.Command{Type: domain.CmdQWEDVerify, Principal: "org_1",
				QWEDVerify: &domain.QWEDVerify{Batch: true, Items: []domain.QWEDItem{
					{RequestDigest: strings.Repeat("a", 64), Type: "math", Engine: "math", Status: "VERIFIED", OutcomeDigest: strings.Repeat("b", 64), Attest: true},
					{RequestDigest: strings.Repeat("c", 64), Type: "sql", Status: "SKIPPED", OutcomeDigest: strings.Repeat("d", 64)}}}}
		default:
			cmd = &domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}}
		}
		reqN++
		cmd.Request = domain.RequestID{Source: "seeded", ID: fmt.Sprint(seed, "-", reqN)}
		ev, err := g.Worker.Submit(context.Background(), cmd)
		if err != nil {
			t.Fatalf("seed %d, command %d (%s): %v", seed, i, cmd.Type, err)
		}
		if ev == nil {
			continue
		}
		answered = append(answered, ev)
		switch {
		case ev.Registered != nil:
			agents = append(agents, ev.Registered.AgentID)
		case ev.Decided != nil && (ev.Decided.Decision == domain.Approved || ev.Decided.Decision == domain.Pending):
			open = append(open, ev.Decided.ActionID)
			if cmd.Verify != nil {
				steps[cmd.AgentID+cmd.Verify.Context.ConversationID] = int(ev.Decided.Step)
			}
		}
	}
	err = g.Log.Read(context.Background(), 1, func(rec streams.Record) error {
		payloads = append(payloads, bytes.Clone(rec.Payload))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return answered, payloads
}

// randomVerdict returns an engine verdict for an action of typ (nil for
// half of them and for types no engine verifies): verified, corrected,
// blocked by findings, failed or uncertain.
func randomVerdict(r *rand.Rand, typ string) *domain.EngineVerdict {
	id := domain.EngineFor(typ)
	if id == "" || r.IntN(2) == 0 {
		return nil
	}
	v := &domain.EngineVerdict{Engine: id, EngineVersion: "1.0", OutcomeDigest: strings.Repeat("e", 64), Risk: domain.RiskLow}
	switch r.IntN(5) {
	case 0:
		v.Status = engines.Verified
	case 1:
		v.Status, v.Corrected = engines.Corrected, "4 < 5 && \"fixed\""
	case 2:
		v.Status = engines.Blocked
		v.Findings = []engines.Finding{
			{Rule: "no-eval", Severity: "high", Message: "eval() <call>", Line: 3, Column: 7, Snippet: "eval(x)\n"},
			{Rule: "style", Severity: "info", Message: "long line"}}
	case 3:
		v.Status, v.Reason = engines.Failed, "2+2 is not 5"
	default:
		v.Status, v.Code, v.Reason = engines.Timeout, "QWED-ENG-003", "took too long"
	}
	return v
}

// TestAppendEventMatchesMarshalOnSeededWorkerRuns: every event the real
// worker answered in three seeded runs of every command kind encodes as
// json.Marshal encodes it, by the fast path; every payload the worker
// stored (through handlers.EncodeEvent, hence AppendEvent), checkpoints
// included, is json.Marshal's encoding of the event it holds.
func TestAppendEventMatchesMarshalOnSeededWorkerRuns(t *testing.T) {
	counts := map[string]int{}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			answered, payloads := seededWorkerRun(t, seed, 500)
			for _, ev := range answered {
				if !encodesAsMarshal(t, ev) {
					t.Fatalf("seq %d (%s) was refused", ev.Seq, ev.Type)
				}
				counts[string(ev.Type)]++
				if d := ev.Decided; d != nil {
					counts[string(d.Decision)]++
					counts["kind "+string(d.Kind)]++
					if d.Attestation != "" {
						counts["attestation"]++
					}
					if d.Error != nil && len(d.Error.Details) > 0 {
						counts["details"]++
					}
					if d.CorrectedAction != nil {
						counts["corrected_action"]++
					}
					if len(d.Verification.Findings) > 0 {
						counts["findings"]++
					}
				}
			}
			for _, p := range payloads {
				var ev domain.Event
				if err := json.Unmarshal(p, &ev); err != nil {
					t.Fatal(err)
				}
				if want, _ := json.Marshal(&ev); !eventjson.OracleEqual(p, want) {
					t.Fatalf("stored payload is not json.Marshal's encoding:\n got %s\nwant %s", p, want)
				}
				if !encodesAsMarshal(t, &ev) {
					t.Fatalf("stored seq %d (%s) was refused", ev.Seq, ev.Type)
				}
				counts["stored "+string(ev.Type)]++
			}
		})
	}
	for _, want := range []string{"APPROVED", "DENIED", "PENDING", "BUDGET_EXCEEDED", "CORRECTED", "attestation", "details",
		"corrected_action", "findings", "kind action", "kind tool_call",
		string(domain.EvCommandRejected), string(domain.EvApprovalResolved), string(domain.EvExecutionLogged),
		string(domain.EvAgentRegistered), string(domain.EvTrustChanged), string(domain.EvAgentStatusChanged),
		string(domain.EvTrustElevationRequested), string(domain.EvToolRegistrySet), string(domain.EvQWEDVerified),
		string(domain.EvApprovalsExpired), "stored " + string(domain.EvLogCheckpointed)} {
		if counts[want] == 0 {
			t.Errorf("the runs produced no %s (%v): the generator no longer covers it", want, counts)
		}
	}
	t.Logf("%v", counts)
}

// TestAppendEventMatchesMarshalOnGeneratedLog: a long history written by
// seedlog.Generate (registrations, decisions, executions, checkpoints,
// all through handlers.EncodeEvent) holds json.Marshal's encoding of
// every event, and the fast path encodes each of them.
func TestAppendEventMatchesMarshalOnGeneratedLog(t *testing.T) {
	singleGoroutine(t)
	dir := t.TempDir()
	_, err := seedlog.Generate(context.Background(), dir, seedlog.GenOptions{Agents: 7, Events: 3000,
		Start: time.Date(2026, 11, 1, 8, 0, 0, 123456789, time.UTC), Step: 1500 * time.Millisecond, Executions: true, CheckpointEvents: 250})
	if err != nil {
		t.Fatal(err)
	}
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	counts := map[domain.EventType]int{}
	err = g.Log.Read(context.Background(), 1, func(rec streams.Record) error {
		var ev domain.Event
		if err := json.Unmarshal(rec.Payload, &ev); err != nil {
			return err
		}
		if want, _ := json.Marshal(&ev); !eventjson.OracleEqual(rec.Payload, want) {
			t.Fatalf("stored payload is not json.Marshal's encoding:\n got %s\nwant %s", rec.Payload, want)
		}
		if !encodesAsMarshal(t, &ev) {
			t.Fatalf("seq %d (%s) was refused", ev.Seq, ev.Type)
		}
		counts[ev.Type]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if counts[domain.EvActionDecided] != 3000 || counts[domain.EvExecutionLogged] == 0 || counts[domain.EvLogCheckpointed] == 0 {
		t.Fatalf("generated log holds %v", counts)
	}
}

// TestEncodeEventIsMarshal pins handlers.EncodeEvent (the worker's and
// the replay's encoder) to Marshal and AppendEvent, and Marshal to the
// oracle where it encodes.
func TestEncodeEventIsMarshal(t *testing.T) {
	for _, c := range edgeEvents() {
		want, wantErr := eventjson.AppendEvent(nil, c.ev)
		got, err := handlers.EncodeEvent(c.ev)
		if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: EncodeEvent = %q, %v; AppendEvent = %q, %v", c.name, got, err, want, wantErr)
		}
		if m, err := eventjson.Marshal(c.ev); !bytes.Equal(m, want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: Marshal = %q, %v; AppendEvent = %q, %v", c.name, m, err, want, wantErr)
		}
		encodesAsMarshal(t, c.ev)
	}
}

// edgeCase is a hand-written event and whether the encoder encodes it
// (fast) or refuses it with an *EncodeError.
type edgeCase struct {
	name string
	ev   *domain.Event
	fast bool
}

func usd(v domain.USD) *domain.USD { return &v }

func i64(v int64) *int64 { return &v }

func level(v domain.TrustLevel) *domain.TrustLevel { return &v }

// decided returns an action.decided event with its usual fields, to be
// edited by the edge cases.
func decided() *domain.Event {
	at := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	return &domain.Event{Seq: 42, Prev: strings.Repeat("0f", 32), Time: at, Type: domain.EvActionDecided,
		Command: &domain.Command{Type: domain.CmdVerifyAction, Request: domain.RequestID{Source: "http", ID: "req_1"},
			AgentID: "agent_1", TokenHash: strings.Repeat("ab", 32),
			Verify: &domain.VerifyAction{Action: domain.Action{Type: "calculate", Query: "2+2", EstimatedCost: 10_000, EstimatedTokens: 100},
				Context: domain.ActionContext{ConversationID: "c1", StepNumber: "3"}}},
		AgentID: "agent_1",
		Decided: &domain.ActionDecided{ActionID: "act_1", Kind: domain.KindAction, ActionType: "calculate", Decision: domain.Approved,
			Verification: domain.Verification{Status: "VERIFIED", Engine: "math", RiskLevel: domain.RiskLow,
				ChecksPassed: []string{"context_valid", "within_budget"}},
			RequestDigest: strings.Repeat("12", 32), Fingerprint: strings.Repeat("34", 32), ConversationID: "c1", Step: 3,
			StepConsumed: true, ReservedCost: 10_000, ReservedTokens: 100,
			Budget: domain.BudgetRemaining{DailyCost: usd(99_990_000), HourlyRequests: i64(4998)}}}
}

// withDecided returns decided() edited by edit.
func withDecided(edit func(ev *domain.Event)) *domain.Event {
	ev := decided()
	edit(ev)
	return ev
}

// withText puts s in a string field of every kind the fast path writes.
func withText(s string) *domain.Event {
	return withDecided(func(ev *domain.Event) {
		ev.Prev, ev.Command.Request.ID, ev.Command.Verify.Action.Query = s, s, s
		ev.Decided.Verification.ChecksPassed = []string{s, ""}
		ev.Decided.Error = &domain.Error{Code: domain.Code(s), Message: s, Details: map[string]any{s: s, "k": []string{s}}}
	})
}

func edgeEvents() []edgeCase {
	ist := time.FixedZone("IST", 5*3600+1800)
	nano := time.Date(2026, 11, 24, 23, 59, 59, 123456780, ist)
	resolved := time.Date(2026, 11, 24, 10, 0, 0, 1, time.FixedZone("", -7*3600))
	details := map[string]any{
		"limit": domain.USD(1_000_000), "current": domain.USD(907_154), "requested": domain.USD(367_881),
		"limit_name": "max_daily_cost_usd", "reset_at": nil, "step_number": int64(51), "max_steps": int64(50),
		"trust_level": 1, "risk_score": json.Number("0.75"), "rules": []string{"no-eval", "sqli"},
		"nested": map[string]any{"z": 1.5, "a": []any{true, nil, "x", 1e21, 1e-7, math.Copysign(0, -1)}}, "raw": json.RawMessage(` [1, "<a>"] `),
		"when": nano, "whenPtr": &resolved, "u": uint64(math.MaxUint64), "empty": map[string]any{}, "emptyList": []any{},
		"nilList": []string(nil), "nilMap": map[string]any(nil), "": "empty key", "<key>": "html & key",
	}
	cases := []edgeCase{
		{"nil event", nil, true},
		{"zero event", &domain.Event{}, true},
		{"approved", decided(), true},
		{"approved, attested, sandbox, high risk", withDecided(func(ev *domain.Event) {
			ev.Command.Verify.Options = domain.Options{RequireAttestation: true, RiskThreshold: "medium"}
			d := ev.Decided
			d.Attestation, d.HighRisk, d.Verification.Sandbox = "eyJhbGciOiJFUzI1NiJ9.eyJ9.sig", true, true
			d.StateFingerprint, d.ConversationEvicted, d.OutcomeDigest = "sf", "c0", "od"
			d.Verification.RiskScore = "0.9"
		}), true},
		{"pending with approval", withDecided(func(ev *domain.Event) {
			d := ev.Decided
			d.Decision = domain.Pending
			d.Approval = &domain.Approval{ID: "act_1", AgentID: "agent_1", PrincipalID: "org_1", Kind: "action",
				Status: domain.ApprovalPending, Summary: "calculate <2+2>", Risk: domain.RiskHigh, ToLevel: level(2),
				CreatedAt: nano, ExpiresAt: nano.Add(24 * time.Hour), ResolvedAt: &resolved, ResolvedBy: "org_1", Reason: "ok"}
		}), true},
		{"denied with details", withDecided(func(ev *domain.Event) {
			d := ev.Decided
			d.Decision, d.StepConsumed, d.ReservedCost, d.ReservedTokens = domain.BudgetExceeded, false, 0, 0
			d.Verification.ChecksFailed = []string{"within_budget"}
			d.Error = &domain.Error{Code: domain.CodeBudgetCost, Message: "Daily cost limit exceeded", Details: details}
			ev.Error = d.Error
			d.SecurityViolation, d.ResetRecent, d.ResetBudgetDenials = true, true, true
			d.Trust = &domain.TrustChange{From: 2, To: 1, Reason: "denial rate > 30%"}
		}), true},
		{"denied, empty details", withDecided(func(ev *domain.Event) {
			ev.Decided.Decision = domain.Denied
			ev.Decided.Error = &domain.Error{Code: domain.CodeReplay, Message: "replay", Details: map[string]any{}}
		}), true},
		{"corrected with findings", withDecided(func(ev *domain.Event) {
			d := ev.Decided
			d.Decision = domain.Corrected
			d.Verification.Findings = []engines.Finding{{Rule: "r", Severity: "low", Message: "m", Line: -1, Column: math.MaxInt, Snippet: "<x>"}}
			d.CorrectedAction = &domain.Action{Type: "execute_sql", Query: "SELECT 1", Code: "c", Target: "db",
				Parameters: json.RawMessage("{\n  \"a\": \"\u2028\"\n}"), EstimatedCost: 1, EstimatedTokens: -1}
			d.CorrectedDigest = "cd"
			ev.Command.Verdict = &domain.EngineVerdict{Engine: "sql", EngineVersion: "2", Status: engines.Corrected, OutcomeDigest: "o",
				Corrected: "SELECT 1", Findings: d.Verification.Findings, Risk: domain.RiskLow, Reason: "r", Code: "c"}
		}), true},
		{"tool call", withDecided(func(ev *domain.Event) {
			ev.Command.Type, ev.Command.Verify = domain.CmdVerifyToolCall, nil
			ev.Command.Tool = &domain.VerifyToolCall{ToolCall: domain.ToolCall{ToolName: "send_email", Parameters: json.RawMessage(`{"to":"a@b"}`),
				EstimatedCost: 5, EstimatedTokens: 6}, Justification: "j", Context: &domain.ActionContext{ConversationID: "t", StepNumber: "1e3",
				UserIntent: "u", PreActionStateHash: "h", StateSource: "s"}, Options: domain.Options{RequireAttestation: true}}
			d := ev.Decided
			d.Kind, d.ActionType, d.Tool = domain.KindTool, "tool_call", "send_email"
			d.Verification.ChecksPassed = []string{}
		}), true},
		{"nil checks_passed", withDecided(func(ev *domain.Event) { ev.Decided.Verification.ChecksPassed = nil }), true},
		{"every budget dimension", withDecided(func(ev *domain.Event) {
			ev.Decided.Budget = domain.BudgetRemaining{DailyCost: usd(math.MinInt64), HourlyRequests: i64(0), DailyRequests: i64(-1),
				DailyTokens: i64(math.MaxInt64), HourlyTools: i64(math.MinInt64), HighRiskCalls: i64(1)}
		}), true},
		{"amounts", withDecided(func(ev *domain.Event) {
			ev.Command.Verify.Action.EstimatedCost = math.MaxInt64
			ev.Decided.ReservedCost = -1
			ev.Seq, ev.Partition = math.MaxUint64, math.MinInt32
		}), true},
		{"time with nanoseconds and an offset", withDecided(func(ev *domain.Event) { ev.Time = nano }), true},
		{"zero time", withDecided(func(ev *domain.Event) { ev.Time = time.Time{} }), true},
		{"zero offset not UTC", withDecided(func(ev *domain.Event) { ev.Time = time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("GMT", 0)) }), true},
		{"offset with seconds", withDecided(func(ev *domain.Event) { ev.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("LMT", -(3600+59))) }), true},
		{"year 9999", withDecided(func(ev *domain.Event) { ev.Time = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC) }), true},
		{"html escapes", withText("<script>alert('x')</script> & co"), true},
		{"line and paragraph separators", withText("a\u2028b\u2029c"), true},
		{"control characters", withText("\x00\x01\b\f\n\r\t\x1f\x7f\"\\/"), true},
		{"invalid UTF-8", withText("a\xffb\xe2\x80c\xed\xa0\x80d\xc0\xaf\xf4\x90\x80\x80"), true},
		{"multi-byte text", withText("é日本語🎉\ufffd\u00b5"), true},
		{"empty strings", withText(""), true},
		{"execution", &domain.Event{Seq: 7, Time: nano, Type: domain.EvExecutionLogged, AgentID: "a",
			Command: &domain.Command{Type: domain.CmdLogExecution, Execution: &domain.LogExecution{ActionID: "act", Success: true, CostUSD: 1, Tokens: 2, ResultHash: "h"}},
			Executed: &domain.ExecutionLogged{ActionID: "act", Success: false, CostUSD: 1_500_000, Tokens: 10, ResultHash: "h",
				CostDelta: -500_001, TokensDelta: -90, SameDay: true, Budget: domain.BudgetRemaining{DailyTokens: i64(5)}}}, true},
		{"rejection", &domain.Event{Type: domain.EvCommandRejected, Error: domain.Errorf(domain.CodeInvalidAgentToken, "wrong token"),
			Command: &domain.Command{Type: domain.CmdRejectRequest, Reject: &domain.RejectRequest{Error: domain.Error{Code: "c", Message: "m",
				Details: map[string]any{"field": "body"}}, Endpoint: "POST /x", BodyBytes: 5}}}, true},
		{"registration", &domain.Event{Type: domain.EvAgentRegistered,
			Command: &domain.Command{Type: domain.CmdRegisterAgent, Principal: "*", Register: &domain.RegisterAgent{
				Agent: domain.AgentInfo{Name: "n", Type: "t"}, Permissions: domain.Permissions{AllowedEngines: []string{}, AllowedTools: []string{"a"}},
				TrustLevel: level(0), TokenHash: "th"}},
			Registered: &domain.AgentRegistered{AgentID: "a", DID: "did:x", Info: domain.AgentInfo{Name: "n", Type: "t", Description: "d",
				PrincipalID: "p", Framework: "f", Model: "m"}, Permissions: domain.Permissions{BlockedTools: []string{"x"}},
				Budget: domain.Limits{MaxDailyCost: 1, MaxPerRequestCost: 2, MaxRequestsPerHour: 3, MaxRequestsPerDay: 4,
					MaxTokensPerRequest: 5, MaxDailyTokens: 6, MaxToolCallsPerHour: 7, MaxHighRiskCallsDay: 8}, TrustLevel: 3}}, true},
		{"checkpoint", &domain.Event{Type: domain.EvLogCheckpointed, Checkpoint: &domain.LogCheckpoint{Seq: 99, Head: "h",
			Next: domain.CheckpointPolicy{Events: 1000, Interval: domain.Duration(1500 * time.Microsecond)}, Signature: "s"}}, true},
		{"configuration", &domain.Event{Type: domain.EvConfigured, Configured: &domain.Config{ApprovalTTL: domain.Duration(-90 * time.Second), MaxSteps: 50},
			Command: &domain.Command{Type: domain.CmdConfigure, Configure: &domain.Configure{Config: domain.DefaultConfig()}}}, true},
		{"expiry", &domain.Event{Type: domain.EvApprovalsExpired, Command: &domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}},
			Expired: &domain.ApprovalsExpired{Approvals: []domain.ApprovalResolved{{Approval: domain.Approval{ID: "x"},
				Trust: &domain.TrustChange{}, ReleasedCost: 3, ReleasedTokens: 4}, {}}}}, true},
		{"no expiries", &domain.Event{Type: domain.EvApprovalsExpired, Expired: &domain.ApprovalsExpired{}}, true},
		{"empty tool registry", &domain.Event{Type: domain.EvToolRegistrySet, ToolRegistry: &domain.PutToolRegistry{Tools: []domain.ToolSpec{}}}, true},
		{"nil attestations", &domain.Event{Type: domain.EvQWEDVerified, QWEDVerified: &domain.QWEDVerified{VerificationID: "v"},
			Command: &domain.Command{Type: domain.CmdQWEDVerify, QWEDVerify: &domain.QWEDVerify{}}}, true},
		{"json.Number zero in details", withDecided(func(ev *domain.Event) {
			ev.Error = &domain.Error{Details: map[string]any{"n": json.Number("")}}
		}), true},

		// The fast path declines; json.Marshal encodes.
		{"float32 in details", withDecided(func(ev *domain.Event) { ev.Error = &domain.Error{Details: map[string]any{"f": float32(0.1)}} }), false},
		{"named string in details", withDecided(func(ev *domain.Event) { ev.Error = &domain.Error{Details: map[string]any{"r": domain.RiskLow}} }), false},
		{"struct in details", withDecided(func(ev *domain.Event) {
			ev.Error = &domain.Error{Details: map[string]any{"s": struct{ A string }{"<"}}}
		}), false},
		{"deep details", withDecided(func(ev *domain.Event) {
			var v any = "leaf"
			for range 40 {
				v = []any{v}
			}
			ev.Error = &domain.Error{Details: map[string]any{"deep": v}}
		}), false},

		// The fast path declines; json.Marshal fails.
		{"invalid step number", withDecided(func(ev *domain.Event) { ev.Command.Verify.Context.StepNumber = "01" }), false},
		{"invalid number in details", withDecided(func(ev *domain.Event) { ev.Error = &domain.Error{Details: map[string]any{"n": json.Number("1.")}} }), false},
		{"invalid parameters", withDecided(func(ev *domain.Event) { ev.Command.Verify.Action.Parameters = json.RawMessage(`{"a":`) }), false},
		{"year 10000", withDecided(func(ev *domain.Event) { ev.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }), false},
		{"year -1", withDecided(func(ev *domain.Event) { ev.Time = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }), false},
		{"offset of a day", withDecided(func(ev *domain.Event) { ev.Time = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)) }), false},
		{"offset of 100 hours", withDecided(func(ev *domain.Event) { ev.Time = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", -100*3600)) }), false},
		{"NaN in details", withDecided(func(ev *domain.Event) { ev.Error = &domain.Error{Details: map[string]any{"x": math.NaN()}} }), false},
		{"infinity in details", withDecided(func(ev *domain.Event) { ev.Error = &domain.Error{Details: map[string]any{"x": math.Inf(-1)}} }), false},
	}
	return cases
}

// TestAppendEventEdgeCases: hand-written events covering every escape
// class, nil against empty slices and maps, times, numbers, every
// decision kind and every optional field set and unset encode as
// json.Marshal encodes them, by the fast path unless the case says the
// fast path declines (the last ones: values it leaves to encoding/json,
// which encodes or refuses them).
func TestAppendEventEdgeCases(t *testing.T) {
	for _, c := range edgeEvents() {
		t.Run(c.name, func(t *testing.T) {
			if fast := encodesAsMarshal(t, c.ev); fast != c.fast {
				t.Errorf("fast path answered %v, want %v", fast, c.fast)
			}
		})
	}
}

// TestAppendEventEveryFieldSet: events with every field of every type
// set (by reflection, so a field added to the domain is set too) encode
// as json.Marshal encodes them, by the fast path.
func TestAppendEventEveryFieldSet(t *testing.T) {
	singleGoroutine(t)
	for seed := range uint64(300) {
		ev := newRandFiller(seed, true).event()
		if zero := zeroFields(reflect.ValueOf(ev).Elem(), "Event"); len(zero) > 0 {
			t.Fatalf("seed %d: the filler left %v unset", seed, zero)
		}
		if !encodesAsMarshal(t, ev) {
			t.Fatalf("seed %d: the fast path declined an event of supported values", seed)
		}
	}
}

// zeroFields lists the struct fields under v that are zero (pointers
// followed, the first element of slices walked).
func zeroFields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return zeroFields(v.Elem(), path)
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Type().Elem().Kind() == reflect.Struct {
			return zeroFields(v.Index(0), path+"[0]")
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return nil
		}
		var out []string
		for i := range v.NumField() {
			out = append(out, zeroFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

// TestAppendEventRandomEvents: randomly filled events (arbitrary bytes in
// every string, extreme numbers, any time, nil and empty slices and maps,
// details of every kind, invalid numbers and raw messages) encode as
// json.Marshal encodes them or fail as it fails; the fast path answers
// for most.
func TestAppendEventRandomEvents(t *testing.T) {
	singleGoroutine(t)
	const n = 5000
	fast := 0
	for seed := range uint64(n) {
		if encodesAsMarshal(t, newRandFiller(seed, false).event()) {
			fast++
		}
	}
	if fast < n/10 {
		t.Fatalf("the fast path answered %d of %d random events", fast, n)
	}
	t.Logf("fast path: %d of %d", fast, n)
}

// TestAppendEventAllocations: the typical decided event costs nothing
// into a buffer with room, and one allocation (its result) through
// Marshal and handlers.EncodeEvent.
func TestAppendEventAllocations(t *testing.T) {
	approved, denied := decided(), edgeEvents()[5].ev
	if denied.Decided.Decision != domain.BudgetExceeded {
		t.Fatalf("edge case 5 is %s, want the budget denial", denied.Decided.Decision)
	}
	denied.Error.Details = map[string]any{"limit": domain.USD(1_000_000), "current": domain.USD(907_154),
		"requested": domain.USD(367_881), "limit_name": "max_daily_cost_usd", "reset_at": "2026-11-25T00:00:00Z"}
	denied.Decided.Error = denied.Error
	buf := make([]byte, 0, 8192)
	for _, c := range []struct {
		name string
		ev   *domain.Event
	}{{"approved", approved}, {"denied", denied}} {
		if a := testing.AllocsPerRun(100, func() { buf, _ = eventjson.AppendEvent(buf[:0], c.ev) }); a != 0 {
			t.Errorf("%s: AppendEvent allocates %v times, want 0", c.name, a)
		}
		if a := testing.AllocsPerRun(100, func() { _, _ = eventjson.Marshal(c.ev) }); a != 1 {
			t.Errorf("%s: Marshal allocates %v times, want 1", c.name, a)
		}
		if a := testing.AllocsPerRun(100, func() { _, _ = handlers.EncodeEvent(c.ev) }); a != 1 {
			t.Errorf("%s: handlers.EncodeEvent allocates %v times, want 1", c.name, a)
		}
	}
}
