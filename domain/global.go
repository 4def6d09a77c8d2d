package domain

// Principal-wide state on Kafka (docs/ARCHITECTURE.md, "Principal-wide
// state on Kafka, built"): a command that changes what every partition
// needs (API keys, tool registries, configuration, A2A trust boundaries)
// is decided on one partition (GlobalPartition), marked Command.Global;
// every other partition copies the events it recorded, in that
// partition's order, as one principal.state_copied event whose command
// (CmdCopyPrincipalState) carries them.

// CmdCopyPrincipalState records, on a partition, the principal-wide
// events of GlobalPartition it has not copied yet. Only a gate sends it.
const CmdCopyPrincipalState CommandType = "qwed.gate.principal_state.copy"

// EvPrincipalStateCopied records the copy of principal-wide events
// decided on GlobalPartition (its command's Copy carries them).
const EvPrincipalStateCopied EventType = "principal.state_copied"

// GlobalPartition is the partition that decides every principal-wide
// command marked Command.Global.
const GlobalPartition int32 = 0

// MaxCopiedChanges bounds the changes of one copy.
const MaxCopiedChanges = 1024

// PrincipalStateCopy is the payload of CmdCopyPrincipalState: the
// principal-wide changes GlobalPartition recorded after the last copy,
// up to and including its event Seq, whose record has Hash (the chain's
// hash, so an audit can find it there) and lies at Kafka offset Offset
// of the events partition (where the copying partition resumes reading).
type PrincipalStateCopy struct {
	From    int32          `json:"from"`
	Seq     uint64         `json:"seq"`
	Hash    string         `json:"hash"`
	Offset  int64          `json:"offset"`
	Changes []CopiedChange `json:"changes"`
}

// CopiedChange is one principal-wide event of GlobalPartition as copied:
// its seq, its type and the members of that event that folding it reads
// (the principal of an A2A boundary change is its command's).
type CopiedChange struct {
	Seq          uint64             `json:"seq"`
	Type         EventType          `json:"type"`
	Principal    string             `json:"principal,omitempty"`
	ToolRegistry *PutToolRegistry   `json:"tool_registry,omitempty"`
	KeyIssued    *IssuePrincipalKey `json:"key_issued,omitempty"`
	KeyRevoked   *IssuePrincipalKey `json:"key_revoked,omitempty"`
	Configured   *Config            `json:"configured,omitempty"`
	A2ABoundary  *A2ABoundaryChange `json:"a2a_boundary,omitempty"`
	// Business is the business of a business.changed event.
	Business *Business `json:"business,omitempty"`
	// PrincipalPermissions is the policy of a principal.permissions_set
	// event.
	PrincipalPermissions *PrincipalPermissions `json:"principal_permissions,omitempty"`
}

// CopyPosition is how far a partition has copied GlobalPartition: the
// seq, hash and offset of the last event copied.
type CopyPosition struct {
	Seq    uint64 `json:"seq"`
	Hash   string `json:"hash"`
	Offset int64  `json:"offset"`
}

// PrincipalWide reports whether events of type t change principal-wide
// state: the types a partition copies from GlobalPartition (audit checks
// the copies against them).
func PrincipalWide(t EventType) bool { return principalWide(t) }

// principalWide reports whether events of type t change principal-wide
// state.
func principalWide(t EventType) bool {
	switch t {
	case EvToolRegistrySet, EvPrincipalKeyIssued, EvPrincipalKeyRevoked, EvConfigured, EvA2ABoundaryChanged, EvBusinessChanged,
		EvPrincipalPermissionsSet:
		return true
	}
	return false
}

// CopyOf returns the change ev makes to principal-wide state, when it is
// one to copy: an event of GlobalPartition decided for a command marked
// Global that changed principal-wide state (refusals change nothing).
// Events of commands decided on every partition (logs written before
// Global) are not copied: each partition decided them itself.
func CopyOf(ev *Event) (CopiedChange, bool) {
	if ev == nil || ev.Partition != GlobalPartition || ev.Command == nil || !ev.Command.Global || !principalWide(ev.Type) {
		return CopiedChange{}, false
	}
	c := CopiedChange{
		Seq: ev.Seq, Type: ev.Type, ToolRegistry: ev.ToolRegistry, KeyIssued: ev.KeyIssued, KeyRevoked: ev.KeyRevoked,
		Configured: ev.Configured, A2ABoundary: ev.A2ABoundary, Business: ev.Business, PrincipalPermissions: ev.PrincipalPermissions,
	}
	if ev.Type == EvA2ABoundaryChanged {
		c.Principal = ev.Command.Principal // whose boundary
	}
	return c, true
}

// event is the change as an event Apply folds (its principal-wide part).
func (c *CopiedChange) event() *Event {
	ev := &Event{Seq: c.Seq, Type: c.Type, ToolRegistry: c.ToolRegistry, KeyIssued: c.KeyIssued,
		KeyRevoked: c.KeyRevoked, Configured: c.Configured, A2ABoundary: c.A2ABoundary, Business: c.Business,
		PrincipalPermissions: c.PrincipalPermissions}
	if c.Type == EvA2ABoundaryChanged {
		ev.Command = &Command{Principal: c.Principal}
	}
	return ev
}

// copyPrincipalState decides a CmdCopyPrincipalState: the changes must
// come from GlobalPartition (another partition than this one), in seq
// order, after the last copy, each a principal-wide change carrying its
// payload, the last at Copy.Seq.
func (d *decider) copyPrincipalState() *Event {
	c := d.cmd.Copy
	if c == nil {
		return d.reject(missing("copy"))
	}
	if d.cmd.Principal != "" || d.cmd.TokenHash != "" {
		return d.reject(Errorf(CodeForbidden, "only the gate copies principal-wide state"))
	}
	if c.From != GlobalPartition || d.env.Partition == GlobalPartition {
		return d.reject(fieldError(CodeInvalidRequest, "copy.from", "partition %d copies partition %d's principal-wide state only", d.env.Partition, GlobalPartition))
	}
	if len(c.Changes) == 0 || len(c.Changes) > MaxCopiedChanges {
		return d.reject(fieldError(CodeInvalidRequest, "copy.changes", "must hold 1 to %d changes", MaxCopiedChanges))
	}
	if !isSHA256Hex(c.Hash) {
		return d.reject(fieldError(CodeInvalidRequest, "copy.hash", "must be 64 lowercase hex digits (SHA-256)"))
	}
	after := d.s.Copies[d.env.Partition].Seq
	for i := range c.Changes {
		ch := &c.Changes[i]
		if ch.Seq <= after {
			return d.reject(fieldError(CodeInvalidRequest, "copy.changes", "change at seq %d is not after seq %d", ch.Seq, after))
		}
		after = ch.Seq
		if !principalWide(ch.Type) || !ch.carries() {
			return d.reject(fieldError(CodeInvalidRequest, "copy.changes", "change at seq %d is not a principal-wide change with its payload", ch.Seq))
		}
	}
	if after != c.Seq {
		return d.reject(fieldError(CodeInvalidRequest, "copy.seq", "the last change is at seq %d, not %d", after, c.Seq))
	}
	d.ev.Type = EvPrincipalStateCopied
	return d.ev
}

// carries reports whether the change holds the one payload its type
// needs, and no other.
func (c *CopiedChange) carries() bool {
	n := 0
	for _, set := range [...]bool{c.ToolRegistry != nil, c.KeyIssued != nil, c.KeyRevoked != nil, c.Configured != nil, c.A2ABoundary != nil, c.Business != nil,
		c.PrincipalPermissions != nil} {
		if set {
			n++
		}
	}
	if n != 1 || (c.Principal != "") != (c.Type == EvA2ABoundaryChanged) {
		return false
	}
	switch c.Type {
	case EvToolRegistrySet:
		return c.ToolRegistry != nil
	case EvPrincipalKeyIssued:
		return c.KeyIssued != nil
	case EvPrincipalKeyRevoked:
		return c.KeyRevoked != nil
	case EvConfigured:
		return c.Configured != nil
	case EvA2ABoundaryChanged:
		return c.A2ABoundary != nil && c.Principal != ""
	case EvBusinessChanged:
		return c.Business != nil
	case EvPrincipalPermissionsSet:
		return c.PrincipalPermissions != nil
	}
	return false
}

// applyCopied folds a principal.state_copied event: the position copied
// (by the partition that recorded it) and each change.
func applyCopied(s *State, ev *Event) {
	if ev.Command == nil || ev.Command.Copy == nil {
		return
	}
	c := ev.Command.Copy
	if s.Copies == nil {
		s.Copies = map[int32]CopyPosition{}
	}
	s.Copies[ev.Partition] = CopyPosition{Seq: c.Seq, Hash: c.Hash, Offset: c.Offset}
	for i := range c.Changes {
		applyPrincipalWide(s, c.Changes[i].event())
	}
}
