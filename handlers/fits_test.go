package handlers

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// TestFitsRefusesEventsApplyWouldIgnore pins the machine's assertion that
// its own decisions fit its state: each event domain.Apply would ignore is
// named, and the ones it folds pass.
func TestFitsRefusesEventsApplyWouldIgnore(t *testing.T) {
	st := domain.NewState()
	st.Agents["a1"] = &domain.Agent{ID: "a1", OpenActions: map[string]*domain.OpenAction{"act1": {}}}
	st.Approvals["ap1"] = &domain.Approval{ID: "ap1", Status: domain.ApprovalPending}
	st.Approvals["ap2"] = &domain.Approval{ID: "ap2", Status: domain.ApprovalApproved}
	for _, tc := range []struct {
		ev   domain.Event
		want string // "" fits
	}{
		{domain.Event{Type: domain.EvAgentRegistered, Registered: &domain.AgentRegistered{AgentID: "a2"}}, ""},
		{domain.Event{Type: domain.EvAgentRegistered, Registered: &domain.AgentRegistered{AgentID: "a1"}}, "registered already"},
		{domain.Event{Type: domain.EvActionDecided, AgentID: "a1", Decided: &domain.ActionDecided{}}, ""},
		{domain.Event{Type: domain.EvActionDecided, AgentID: "a9", Decided: &domain.ActionDecided{}}, "not registered"},
		{domain.Event{Type: domain.EvActionDecided, AgentID: "a1"}, "no decision"},
		{domain.Event{Type: domain.EvExecutionLogged, AgentID: "a1", Executed: &domain.ExecutionLogged{ActionID: "act1"}}, ""},
		{domain.Event{Type: domain.EvExecutionLogged, AgentID: "a1", Executed: &domain.ExecutionLogged{ActionID: "act2"}}, "not open"},
		{domain.Event{Type: domain.EvApprovalResolved, Resolved: &domain.ApprovalResolved{Approval: domain.Approval{ID: "ap1"}}}, ""},
		{domain.Event{Type: domain.EvApprovalResolved, Resolved: &domain.ApprovalResolved{Approval: domain.Approval{ID: "ap2"}}}, "not pending"},
		{domain.Event{Type: domain.EvApprovalsExpired, Expired: &domain.ApprovalsExpired{Approvals: []domain.ApprovalResolved{{Approval: domain.Approval{ID: "ap9"}}}}}, "not pending"},
		{domain.Event{Type: domain.EvTrustChanged, AgentID: "a9", TrustChanged: &domain.TrustChange{}}, "not registered"},
		{domain.Event{Type: domain.EvAgentStatusChanged, AgentID: "a1"}, "no status change"},
		{domain.Event{Type: domain.EvAgentTokenRevoked, AgentID: "a1", TokenChanged: &domain.AgentTokenChange{}}, ""},
		{domain.Event{Type: domain.EvLogCheckpointed}, ""},
	} {
		err := fits(st, &tc.ev)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.ev.Type, err, tc.want)
		}
	}
}

// TestDecideAssertsTheBatchBound: a driver handing the machine more than
// MaxBatch commands breaks its contract, and the machine says so.
func TestDecideAssertsTheBatchBound(t *testing.T) {
	dir := t.TempDir()
	log, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	store, err := projections.Open(filepath.Join(dir, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := NewMachine(context.Background(), MachineConfig{Log: log, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*domain.Command, MaxBatch+1)
	for i := range cmds {
		cmds[i] = &domain.Command{Type: domain.CmdTick, Tick: &domain.Tick{}}
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "more than MaxBatch") {
			t.Fatalf("recovered %v, want the MaxBatch assertion", p)
		}
	}()
	m.Decide(context.Background(), time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), cmds)
}
