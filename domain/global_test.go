package domain

import (
	"strings"
	"testing"
	"time"
)

// A copy of partition 0's principal-wide changes is decided on another
// partition only from the gate, in seq order after the last copy, each
// change with its one payload, and folds every change and the position.
func TestCopyPrincipalState(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	key := &IssuePrincipalKey{PrincipalID: "org_1", KeyID: "k1", KeyHash: strings.Repeat("a", 64)}
	boundary := &A2ABoundaryChange{Op: A2AOpTrust, Agent: "agent-x"}
	hash := strings.Repeat("e", 64)
	copyCmd := func(seq uint64, changes ...CopiedChange) *Command {
		return &Command{Type: CmdCopyPrincipalState, Request: RequestID{Source: "agentgate/global", ID: "x"},
			Copy: &PrincipalStateCopy{From: GlobalPartition, Seq: seq, Hash: hash, Offset: 9, Changes: changes}}
	}
	issued := CopiedChange{Seq: 4, Type: EvPrincipalKeyIssued, KeyIssued: key}
	trusted := CopiedChange{Seq: 7, Type: EvA2ABoundaryChanged, Principal: "org_1", A2ABoundary: boundary}
	env := Env{Now: at, Seq: 1, Partition: 1}

	s := NewState()
	ev := Decide(s, env, copyCmd(7, issued, trusted))
	if ev.Type != EvPrincipalStateCopied || ev.Error != nil {
		t.Fatalf("a valid copy: %s %+v", ev.Type, ev.Error)
	}
	Apply(s, ev)
	if s.Keys[key.KeyHash] != "org_1" || s.KeyIDs["k1"] != key.KeyHash {
		t.Fatalf("the copied key is not folded: %v", s.Keys)
	}
	if b := s.A2A.Boundaries["org_1"]; b == nil || len(b.Trusted) != 1 || b.Trusted[0] != "agent-x" {
		t.Fatalf("the copied boundary is not folded: %+v", s.A2A)
	}
	if s.Copies[1] != (CopyPosition{Seq: 7, Hash: hash, Offset: 9}) {
		t.Fatalf("the position copied: %+v", s.Copies)
	}
	revoked := CopiedChange{Seq: 9, Type: EvPrincipalKeyRevoked, KeyRevoked: key}
	env.Seq = 2
	if ev := Decide(s, env, copyCmd(9, revoked)); ev.Type != EvPrincipalStateCopied {
		t.Fatalf("the next copy: %s %+v", ev.Type, ev.Error)
	} else if Apply(s, ev); len(s.Keys) != 0 {
		t.Fatalf("the copied revocation is not folded: %v", s.Keys)
	}

	for name, cmd := range map[string]*Command{
		"not after the last copy": copyCmd(4, issued),
		"out of order":            copyCmd(11, CopiedChange{Seq: 11, Type: EvPrincipalKeyIssued, KeyIssued: key}, CopiedChange{Seq: 10, Type: EvPrincipalKeyIssued, KeyIssued: key}),
		"seq not the last":        copyCmd(12, CopiedChange{Seq: 11, Type: EvPrincipalKeyIssued, KeyIssued: key}),
		"no payload":              copyCmd(11, CopiedChange{Seq: 11, Type: EvPrincipalKeyIssued}),
		"another payload":         copyCmd(11, CopiedChange{Seq: 11, Type: EvPrincipalKeyIssued, KeyRevoked: key}),
		"a principal on a key":    copyCmd(11, CopiedChange{Seq: 11, Type: EvPrincipalKeyIssued, KeyIssued: key, Principal: "org_1"}),
		"not principal-wide":      copyCmd(11, CopiedChange{Seq: 11, Type: EvAgentRegistered, KeyIssued: key}),
		"no change":               copyCmd(11),
		"from another partition":  {Type: CmdCopyPrincipalState, Copy: &PrincipalStateCopy{From: 2, Seq: 11, Hash: hash, Changes: []CopiedChange{revoked}}},
		"no hash":                 {Type: CmdCopyPrincipalState, Copy: &PrincipalStateCopy{Seq: 11, Changes: []CopiedChange{{Seq: 11, Type: EvPrincipalKeyRevoked, KeyRevoked: key}}}},
		"sent by a principal":     {Type: CmdCopyPrincipalState, Principal: "org_1", Copy: copyCmd(11, CopiedChange{Seq: 11, Type: EvPrincipalKeyRevoked, KeyRevoked: key}).Copy},
		"no copy":                 {Type: CmdCopyPrincipalState},
	} {
		if ev := Decide(s, env, cmd); ev.Type != EvCommandRejected || ev.Error == nil {
			t.Errorf("%s: %s, want a refusal", name, ev.Type)
		}
	}
	// Partition 0 never copies.
	if ev := Decide(s, Env{Now: at, Seq: 3, Partition: GlobalPartition}, copyCmd(11, CopiedChange{Seq: 11, Type: EvPrincipalKeyRevoked, KeyRevoked: key})); ev.Type != EvCommandRejected {
		t.Fatalf("a copy on partition 0: %s", ev.Type)
	}
}

// Only partition 0's events of Global commands that changed principal-wide
// state are copied: not those decided on every partition before, not
// refusals.
func TestCopyOf(t *testing.T) {
	key := &IssuePrincipalKey{PrincipalID: "org_1", KeyID: "k1", KeyHash: strings.Repeat("a", 64)}
	ev := &Event{Seq: 3, Type: EvPrincipalKeyIssued, KeyIssued: key, Command: &Command{Type: CmdIssuePrincipalKey, Principal: AdminPrincipal, Global: true}}
	if c, ok := CopyOf(ev); !ok || c.Seq != 3 || c.KeyIssued != key || c.Principal != "" {
		t.Fatalf("a Global key issue: %+v %v", c, ok)
	}
	old := *ev
	old.Command = &Command{Type: CmdIssuePrincipalKey, Principal: AdminPrincipal}
	rejected := *ev
	rejected.Type = EvCommandRejected
	other := *ev
	other.Partition = 1
	for name, e := range map[string]*Event{"broadcast": &old, "refused": &rejected, "on partition 1": &other} {
		if _, ok := CopyOf(e); ok {
			t.Errorf("%s: copied", name)
		}
	}
}
