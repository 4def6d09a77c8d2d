package replay_test

import (
	"maps"
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// frozenExecLog is the log of an embedded gate deciding businesses,
// consumer policies, prepares, executes and their outcomes across two
// restarts and three execute modes, frozen with its projection store and
// signing key (testdata/log-exec/README.md).
const frozenExecLog = "testdata/log-exec"

// TestReplayVerifyReproducesTheExecuteLog is issue 14's promise for the
// consumer policy engine: replay --verify re-decides every business
// change, policy change, prepare, execute, outcome and execute tick byte
// for byte (the confirmation tokens, open transactions and policies
// restored from the projections across the restarts) and rebuilds
// projections equal to the frozen store key by key (the exec state, the
// transaction history, the policy versions).
func TestReplayVerifyReproducesTheExecuteLog(t *testing.T) {
	replayFrozen(t, frozenExecLog, 66)
}

// TestFrozenExecLogCoversEveryOutcome pins what the frozen log holds, so
// that a thinner fixture is caught rather than quietly testing less.
func TestFrozenExecLogCoversEveryOutcome(t *testing.T) {
	types, codes, statuses := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range readFrozenLog(t, filepath.Join(frozenExecLog, "log.jsonl")) {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			t.Fatalf("decoding record %d: %v", r.Seq, err)
		}
		types[string(ev.Type)]++
		if ev.Error != nil {
			codes[string(ev.Error.Code)]++
		}
		if ev.Transaction != nil {
			statuses[string(ev.Type)+":"+ev.Transaction.Status]++
		}
	}
	wantTypes := map[string]int{"agent.registered": 3, "approval.resolved": 1, "business.changed": 6, "command.rejected": 19,
		"execute.completed": 8, "execute.decided": 11, "execute.prepared": 6, "execute.timers": 2, "gate.configured": 3,
		"log.checkpointed": 5, "policy.changed": 7}
	if !maps.Equal(types, wantTypes) {
		t.Errorf("event types %v, want %v", types, wantTypes)
	}
	for _, c := range []domain.Code{domain.CodeExecConfirmationRequired, domain.CodeExecTokenInvalid, domain.CodeExecTokenExpired,
		domain.CodeExecTokenMismatch, domain.CodeExecAmountExceeded, domain.CodeExecUnknownBusiness, domain.CodeExecBusinessFailed,
		domain.CodePolicySpending} {
		if codes[string(c)] == 0 {
			t.Errorf("no event of code %s (%v)", c, codes)
		}
	}
	wantStatuses := map[string]int{"approval.resolved:executing": 1, "execute.completed:completed": 6, "execute.completed:failed": 1,
		"execute.completed:pending_confirmation": 1, "execute.decided:blocked": 2, "execute.decided:executing": 6,
		"execute.decided:pending_approval": 1, "execute.decided:queued": 2}
	if !maps.Equal(statuses, wantStatuses) {
		t.Errorf("transactions %v, want %v", statuses, wantStatuses)
	}
}
