package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

var randomSeed = flag.Uint64("seed", 0, "run TestDesign2_1_SeededRunThroughTheWorker with this seed only")

// TestDesign2_1_SeededRunThroughTheWorker drives the real worker (Pebble
// log, projections, ES256 keyring) with a seeded random sequence of every
// command kind, time passing, wrong tokens and retries, then checks the
// invariants end to end: rebuilding the projections from the log gives
// the live store key for key; re-deciding every recorded command gives the
// same bytes, attestations included; and the same after a restart that
// recovers from the projections. Reproduce a failure with -seed N.
func TestDesign2_1_SeededRunThroughTheWorker(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if *randomSeed != 0 {
		seeds = []uint64{*randomSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { seededRun(t, seed, 500) })
	}
}

// seededCheckpoints puts a log checkpoint (and the projections' agent
// snapshots) every 40 events into the seeded runs, and none by time: a
// checkpoint due by time is appended by the worker's wall-clock tick,
// which would race with the run's checks of an idle gate.
var seededCheckpoints = domain.CheckpointPolicy{Events: 40, Interval: domain.Duration(365 * 24 * time.Hour)}

func seededRun(t *testing.T, seed uint64, n int) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 23, 0, 0, 0, time.UTC))
	g := gatetest.StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Checkpoint: seededCheckpoints})
	ctx := context.Background()

	type agentRun struct {
		id    string
		steps map[string]int
	}
	var agents []*agentRun
	var open []string // action ids approved or pending, for executions and resolutions
	counts := map[string]int{}
	reqN := 0
	next := func() domain.RequestID {
		reqN++
		return domain.RequestID{Source: "seeded", ID: fmt.Sprint(seed, "-", reqN)}
	}
	types := []string{"calculate", "execute_sql", "api_call", "send_email", "read_file", "delete_file", "unknown_thing"}
	queries := []string{"SELECT 1", "2+2", "UPDATE t SET a = 1 WHERE id = 2", "DELETE FROM t"}
	tools := []string{"search", "send_email", "execute_code", "mystery_tool"}

	var last *domain.Command
	var lastEv *domain.Event
	for i := 0; i < n; i++ {
		if r.IntN(10) == 0 {
			clock.Advance(time.Duration(r.IntN(90)) * time.Minute) // crosses midnight and hours
		}
		var cmd *domain.Command
		pick := r.IntN(100)
		switch {
		case len(agents) < 2 || pick < 4:
			cmd = gatetest.Register(fmt.Sprint("seeded-", seed, "-", reqN), r.IntN(4))
			cmd.Register.Budget = domain.Limits{MaxDailyCost: domain.USD(r.IntN(3)+1) * domain.MicrosPerUSD,
				MaxRequestsPerHour: int64(r.IntN(30) + 5), MaxToolCallsPerHour: int64(r.IntN(5) + 1)}
		case pick < 60:
			a := agents[r.IntN(len(agents))]
			conv := fmt.Sprint("c", r.IntN(3))
			step := a.steps[conv] + 1
			if r.IntN(8) == 0 {
				step = max(1, step-1-r.IntN(2)) // replays and out-of-order steps
			}
			cmd = gatetest.Verify(a.id, "", conv, step, queries[r.IntN(len(queries))])
			cmd.Verify.Action.Type = types[r.IntN(len(types))]
			cmd.Verify.Action.EstimatedCost = domain.USD(r.IntN(400_000))
			cmd.Verify.Options.RequireAttestation = r.IntN(4) == 0
			if r.IntN(20) == 0 {
				cmd.TokenHash = command.HashSecret("qwed_agent_wrong")
			}
		case pick < 72:
			a := agents[r.IntN(len(agents))]
			cmd = &domain.Command{Type: domain.CmdVerifyToolCall, AgentID: a.id, TokenHash: command.HashSecret(gatetest.Token),
				Tool: &domain.VerifyToolCall{ToolCall: domain.ToolCall{ToolName: tools[r.IntN(len(tools))], Parameters: json.RawMessage(`{"to":"x"}`)}}}
		case pick < 82 && len(open) > 0:
			id := open[r.IntN(len(open))]
			cmd = &domain.Command{Type: domain.CmdResolveApproval, Principal: "org_1",
				Resolve: &domain.ResolveApproval{ApprovalID: id, Approve: r.IntN(2) == 0, Reason: "seeded"}}
		case pick < 92 && len(open) > 0:
			id := open[r.IntN(len(open))]
			a := agents[r.IntN(len(agents))]
			cmd = &domain.Command{Type: domain.CmdLogExecution, AgentID: a.id, TokenHash: command.HashSecret(gatetest.Token),
				Execution: &domain.LogExecution{ActionID: id, Success: true, CostUSD: domain.USD(r.IntN(300_000)), Tokens: int64(r.IntN(500))}}
		case pick < 95:
			a := agents[r.IntN(len(agents))]
			cmd = &domain.Command{Type: domain.CmdSuspendAgent, AgentID: a.id, Principal: "org_1",
				Suspend: &domain.SuspendAgent{Suspended: r.IntN(3) == 0, Reason: "seeded"}}
		case pick < 97 && last != nil:
			cmd = last // a retry of the same request: the recorded event again
		default:
			a := agents[r.IntN(len(agents))]
			cmd = &domain.Command{Type: domain.CmdSetTrustLevel, AgentID: a.id, Principal: "org_1",
				SetTrust: &domain.SetTrustLevel{Level: domain.TrustLevel(r.IntN(4)), Reason: "seeded"}}
		}
		if cmd.Request.ID == "" {
			cmd.Request = next()
		}
		ev, err := g.Worker.Submit(ctx, cmd)
		if err != nil {
			t.Fatalf("seed %d, command %d (%s): %v", seed, i, cmd.Type, err)
		}
		if cmd == last {
			if ev == nil || lastEv == nil || ev.Seq != lastEv.Seq {
				t.Fatalf("seed %d: a retried request got event %v, want the recorded %v", seed, ev, lastEv)
			}
			continue
		}
		last, lastEv = cmd, ev
		if ev == nil {
			continue
		}
		counts[string(ev.Type)]++
		switch {
		case ev.Registered != nil:
			agents = append(agents, &agentRun{id: ev.Registered.AgentID, steps: map[string]int{}})
		case ev.Decided != nil:
			counts[string(ev.Decided.Decision)]++
			if ev.Decided.Attestation != "" {
				counts["attestation"]++
			}
			if d := ev.Decided.Decision; d == domain.Approved || d == domain.Pending {
				open = append(open, ev.Decided.ActionID)
				if cmd.Verify != nil {
					for _, a := range agents {
						if a.id == cmd.AgentID {
							a.steps[cmd.Verify.Context.ConversationID] = int(ev.Decided.Step)
						}
					}
				}
			}
		}
	}
	for _, want := range []string{"APPROVED", "DENIED", "PENDING", "attestation", string(domain.EvCommandRejected), string(domain.EvApprovalResolved), string(domain.EvExecutionLogged)} {
		if counts[want] == 0 {
			t.Fatalf("seed %d: the run produced no %s (%v): the generator no longer covers it", seed, want, counts)
		}
	}

	check := func(when string) {
		// Recovery decodes with eventjson: every event the run wrote
		// decodes, and encodes back to its payload.
		err := g.Log.Read(ctx, 1, func(r streams.Record) error {
			a, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return err
			}
			if again, err := eventjson.Marshal(a); err != nil || !bytes.Equal(again, r.Payload) {
				t.Errorf("seed %d: seq %d (%s) re-encodes to\n%s, %v\nnot\n%s", seed, r.Seq, a.Type, again, err, r.Payload)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seed %d, %s: reading the log: %v", seed, when, err)
		}
		// A store without activities is rebuilt from events decoded
		// for the fold (eventjson.DecodeFoldEvent): the state it holds
		// is the live one, so nothing the fold decoding skips is read.
		if got, want := rebuiltWithoutActivity(t, g.Log), stateOf(t, g.Store); !bytes.Equal(got, want) {
			t.Fatalf("seed %d, %s: a store without activities rebuilt from the log holds\n%.3000s\nthe live one\n%.3000s", seed, when, got, want)
		}
		rep, err := replay.Replay(ctx, g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
		if err != nil {
			t.Fatalf("seed %d, %s: replay: %v", seed, when, err)
		}
		if !rep.OK() || rep.Redecided == 0 {
			t.Fatalf("seed %d, %s: replay %d events, re-decided %d: projections %q, mismatches %q", seed, when, rep.Events, rep.Redecided, rep.ProjectionDiff, rep.Mismatches)
		}
	}
	// Let time pass once, synchronously: every approval the run's clock has
	// expired is recorded now, so the worker's own (wall-clock) ticks find
	// nothing due and cannot append while the live store is compared.
	if _, err := g.Worker.Submit(ctx, &domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}}); err != nil {
		t.Fatalf("seed %d: tick: %v", seed, err)
	}
	check("live")
	head := g.Worker.Head()
	g.Stop(t)
	g = gatetest.StartWith(t, embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Checkpoint: seededCheckpoints})
	defer g.Stop(t)
	// The stop appended the checkpoint of the events after the last one.
	if h := g.Worker.Head(); h.Seq != head.Seq+1 {
		t.Fatalf("seed %d: head after restart %+v, want %d (the final checkpoint after %+v)", seed, h, head.Seq+1, head)
	}
	check("after a restart")
}

// rebuiltWithoutActivity applies the whole log to a fresh store without
// activities or snapshots, as a Kafka partition worker's, and returns the
// JSON of the state it holds.
func rebuiltWithoutActivity(t *testing.T, log streams.Log) []byte {
	t.Helper()
	s, err := projections.OpenWith(t.TempDir(), projections.Options{NoActivity: true, NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := handlers.ApplyLog(context.Background(), log, s, domain.NewState(), projections.Checkpoint{}); err != nil {
		t.Fatalf("applying the log: %v", err)
	}
	return stateOf(t, s)
}

// stateOf returns the JSON of the state s holds.
func stateOf(t *testing.T, s *projections.Store) []byte {
	t.Helper()
	st, err := s.LoadState()
	if err != nil {
		t.Fatalf("loading state: %v", err)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
