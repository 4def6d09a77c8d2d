package kafkagate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// Consumer-scoped commands (docs/ARCHITECTURE.md, "Executes on Kafka: the
// consumer's home partition"): a consumer's policies, webhooks, prepares,
// executes, outcomes and deliveries are decided on one partition, the
// consumer's home (HomePartition), so that one writer holds the
// consumer's ledger and no two partitions spend the same limit. An agent's
// prepare or execute is authenticated first where the agent lives (the
// partition its id keys), then relayed to the home partition marked
// domain.Command.Authenticated.

// Kafka headers of a prepare or an execute relayed from the partition of
// its agent to its consumer's home partition.
const (
	// HeaderAuthenticated carries the agent the gate authenticated on its
	// partition (a domain.AuthenticatedAgent, JSON).
	HeaderAuthenticated = "agentgate-authenticated"
	// HeaderAuthenticatedMAC carries the HMAC-SHA256 (hex, the internal
	// commands' key) of HeaderAuthenticated and of the request it came
	// with (relayMAC): it cannot be moved onto another request.
	HeaderAuthenticatedMAC = "agentgate-authenticated-mac"
)

// homed reports whether commands of type t are consumer-scoped: decided
// on the home partition of their consumer.
func homed(t domain.CommandType) bool {
	switch t {
	case domain.CmdPolicy, domain.CmdWebhook, domain.CmdPrepareExecute, domain.CmdExecute, domain.CmdExecuteOutcome, domain.CmdDelivery:
		return true
	}
	return false
}

// agentFirst reports whether commands of type t are an agent's
// consumer-scoped commands (prepare, execute): authenticated where the
// agent lives before they go to its consumer's home partition.
func agentFirst(t domain.CommandType) bool {
	return t == domain.CmdPrepareExecute || t == domain.CmdExecute
}

// Consumer returns the consumer whose home partition decides cmd: the
// principal of the agent the gate authenticated (Command.Authenticated),
// the consumer a policy or webhook change names (the admin must name
// one), else the principal of its key. It returns "" for a command
// that is not consumer-scoped, and for an agent's command not yet
// authenticated (decided where the agent lives first).
func Consumer(cmd *domain.Command) string {
	if !homed(cmd.Type) {
		return ""
	}
	if a := cmd.Authenticated; a != nil {
		return a.Principal
	}
	named := ""
	switch {
	case cmd.Type == domain.CmdPolicy && cmd.Policy != nil:
		named = cmd.Policy.Consumer
	case cmd.Type == domain.CmdWebhook && cmd.Webhook != nil:
		named = cmd.Webhook.Webhook.Consumer
	}
	switch {
	case cmd.Type != domain.CmdPolicy && cmd.Type != domain.CmdWebhook:
		return ""
	case named != "":
		return named // the admin names it (Decide refuses another's)
	case cmd.Principal != domain.AdminPrincipal:
		return cmd.Principal
	}
	return ""
}

// HomePartition returns the home partition of consumer among n: the
// partition of domain.HomeKey(consumer).
func HomePartition(consumer string, n int) int32 {
	return PartitionFor(domain.HomeKey(consumer), n)
}

// relaySigned is what HeaderAuthenticatedMAC signs: the authentication
// (auth, HeaderAuthenticated's value) and the source, id, type, subject
// and data of the request req it came with, so that it authenticates that
// request only.
func relaySigned(auth []byte, req *ce.Event) []byte {
	b := make([]byte, 0, len(auth)+len(req.Source)+len(req.ID)+len(req.Type)+len(req.Subject)+len(req.Data)+24)
	b = append(append(b, "agentgate relay\x00"...), auth...)
	for _, s := range []string{req.Source, req.ID, req.Type, req.Subject} {
		b = append(append(b, 0), s...)
	}
	return append(append(b, 0), req.Data...)
}

// relayed returns the agent a relayed request was authenticated as on its
// agent's partition: ok is false when the request carries no
// HeaderAuthenticated; rej is set when it carries one that is not the
// gate's (a bad signature, or an agent that is not the command's).
func (g *Gate) relayed(it *item, cmd *domain.Command) (a *domain.AuthenticatedAgent, ok bool, rej *command.Rejection) {
	v, ok := header(&it.msg, HeaderAuthenticated)
	if !ok {
		return nil, false, nil
	}
	bad := command.Reject(domain.CodeInvalidAPIKey, map[string]any{"header": HeaderAuthenticatedMAC},
		"relayed agent authentication with a bad signature")
	mac, _ := header(&it.msg, HeaderAuthenticatedMAC)
	if !verifyMAC(g.macKey, relaySigned([]byte(v), &it.req), mac) {
		return nil, true, bad
	}
	a = new(domain.AuthenticatedAgent)
	if err := json.Unmarshal([]byte(v), a); err != nil || a.AgentID != cmd.AgentID || a.Principal == "" {
		return nil, true, bad
	}
	return a, true, nil
}

// relay is msg, a request authenticated as agent a on this partition, on
// partition to of the requests topic (its consumer's home), marked
// forwarded and carrying the authentication, signed. Any
// HeaderAuthenticated the request came with is dropped (it was checked:
// only a relay's reaches here).
func (g *Gate) relay(msg kafka.Message, req *ce.Event, to int32, a domain.AuthenticatedAgent) (kafka.Message, error) {
	v, err := json.Marshal(a)
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encoding an authenticated agent: %w", err)
	}
	m := g.copyTo(msg, to)
	h := m.Headers[:0:0]
	for _, x := range m.Headers {
		if x.Key != HeaderAuthenticated && x.Key != HeaderAuthenticatedMAC {
			h = append(h, x)
		}
	}
	m.Headers = append(h, kafka.Header{Key: HeaderAuthenticated, Value: v},
		kafka.Header{Key: HeaderAuthenticatedMAC, Value: []byte(sign(g.macKey, relaySigned(v, req)))})
	return m, nil
}

// routeAgentFirst routes an agent's prepare or execute (agentFirst) read
// on partition pr, with more than one partition. It returns true when it
// took care of it (relayed to the home partition, or refused), false
// when the item goes on its way: enqueued here, or forwarded by RouteKey.
//
//   - A relay from the agent's partition (HeaderAuthenticated, checked)
//     is marked Authenticated: RouteKey then names this partition, the
//     consumer's home.
//   - Read on a partition other than its agent's: RouteKey forwards it
//     there.
//   - On its agent's partition, the agent is authenticated against the
//     partition's projections (domain.CheckAgentCredentials, as Decide
//     checks it). Accepted, it is relayed to its consumer's home
//     partition, or decided here when this is the home (Decide
//     authenticates the agent itself: this partition holds it). Refused,
//     it is decided here marked Authenticated without a principal: Decide
//     authenticates the agent itself and records its refusal, and never
//     decides such a command further (the projections may lag the state
//     by a batch: a command they refuse is refused, fail closed).
func (g *Gate) routeAgentFirst(ctx context.Context, pr *partition, it *item, cmd *domain.Command, principal string) bool {
	if a, ok, rej := g.relayed(it, cmd); ok {
		if rej != nil {
			it.rej, it.dead = rej, rej.Error()
			it.pend = g.audit(ctx, pr, it, principal)
			return true
		}
		cmd.Authenticated = a
		return false
	}
	if cmd.AgentID == "" || PartitionFor(cmd.AgentID, g.partitions) != pr.id {
		return false
	}
	a, err := pr.store.AgentAuth(cmd.AgentID)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		it.rej = command.Reject(domain.CodeUnavailable, nil, "agents cannot be read")
		it.pend = g.audit(ctx, pr, it, principal)
		return true
	}
	if a == nil || domain.CheckAgentCredentials(a, cmd.AgentID, cmd.Principal, cmd.TokenHash, false) != nil {
		cmd.Authenticated = &domain.AuthenticatedAgent{AgentID: cmd.AgentID, Partition: pr.id}
		return false
	}
	home := HomePartition(a.Info.PrincipalID, g.partitions)
	if home == pr.id {
		return false
	}
	m, err := g.relay(it.msg, &it.req, home, domain.AuthenticatedAgent{AgentID: a.ID, Principal: a.Info.PrincipalID, Partition: pr.id})
	if err != nil {
		it.rej = command.Reject(domain.CodeInternal, nil, "the request could not be relayed to its consumer's partition")
		it.pend = g.audit(ctx, pr, it, principal)
		return true
	}
	g.resend(ctx, m)
	it.done = true
	return true
}

// submitAgentFirst has an agent's prepare or execute (agentFirst)
// decided, with more than one partition. Its credentials are checked
// against the read model as Decide checks them (where the agent lives):
// accepted, it goes to the home partition of the agent's principal marked
// Authenticated; refused, to the agent's partition marked Authenticated
// without a principal, where Decide checks the agent itself and records
// the refusal (and refuses it as unavailable should the read model have
// been behind: never decided away from home). It returns the recorded
// event once the read model holds it, as Submit.
func (h *HTTPGate) submitAgentFirst(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	c := *cmd
	p := PartitionFor(cmd.AgentID, h.partitions)
	c.Authenticated = &domain.AuthenticatedAgent{AgentID: cmd.AgentID, Partition: p}
	if a := h.agentAuth(ctx, cmd); a != nil {
		c.Authenticated.Principal = a.Info.PrincipalID
		p = HomePartition(a.Info.PrincipalID, h.partitions)
	}
	ev, err := h.send(ctx, &c, p)
	if err != nil {
		return nil, err
	}
	if err := h.readable(ctx, p, ev.Seq); err != nil {
		return nil, err
	}
	return ev, nil
}

// agentAuth returns the agent of cmd when its credentials authenticate it
// in the read model, after one catch-up when they do not at first (the
// agent was registered, or its token rotated, through another instance a
// moment ago: ReadModel.CatchUp makes every write acknowledged before the
// call readable); nil when they do not, or the read model cannot tell.
func (h *HTTPGate) agentAuth(ctx context.Context, cmd *domain.Command) *domain.Agent {
	if h.reads == nil || cmd.AgentID == "" {
		return nil
	}
	for caughtUp := false; ; caughtUp = true {
		a, err := h.reads.Store().AgentAuth(cmd.AgentID)
		if err != nil && !errors.Is(err, projections.ErrNotFound) {
			return nil
		}
		if err == nil && domain.CheckAgentCredentials(a, cmd.AgentID, cmd.Principal, cmd.TokenHash, false) == nil {
			return a
		}
		if caughtUp || h.reads.CatchUp(ctx) != nil {
			return nil
		}
	}
}

// approvalHome returns the partition to forward a resolution read on pr
// to: the home partition of its principal when pr does not hold the
// approval (an execute approval lives on its consumer's home, where its
// transaction is). ok is false when pr holds it, when the resolution is
// the admin's (who has no home: the admin keys it by "consumer/" and the
// consumer), and with one partition.
func (g *Gate) approvalHome(pr *partition, cmd *domain.Command) (int32, bool) {
	if !g.global() || cmd.Type != domain.CmdResolveApproval || cmd.Resolve == nil || cmd.Principal == "" || cmd.Principal == domain.AdminPrincipal {
		return 0, false
	}
	home := HomePartition(cmd.Principal, g.partitions)
	if home == pr.id {
		return 0, false
	}
	if _, err := pr.store.Approval(cmd.Resolve.ApprovalID); !errors.Is(err, projections.ErrNotFound) {
		return 0, false
	}
	return home, true
}

// HeaderConfirmationToken carries the confirmation token of a
// qwed.execute (the X-Confirmation-Token of POST /agp/execute, the Agent
// Policy Engine spec §2.2); only its hash enters the command.
const HeaderConfirmationToken = kafkaout.HeaderConfirmationToken

// build builds the command of a CloudEvent (command.Kafka.BuildEvent). A
// prepare or an execute also takes the confirmation token of
// HeaderConfirmationToken and the execute mode of the partition's
// configuration, which decide how a body that does not decode is refused
// (§2.4).
func (g *Gate) build(pr *partition, msg *kafka.Message, ev *ce.Event, id domain.RequestID, cr command.Credentials) (command.Built, *command.Rejection) {
	if !agentFirst(domain.CommandType(ev.Type)) {
		return command.Kafka.BuildEvent(ev.Type, ev.Subject, ev.Data, id, cr)
	}
	ep, rej := command.ForEvent(ev.Type)
	if rej != nil {
		return command.Built{}, rej
	}
	in := &command.Input{Body: ev.Data, AgentID: ev.Subject}
	in.ConfirmationToken, _ = header(msg, HeaderConfirmationToken)
	if c, err := pr.store.GateConfig(); err == nil {
		in.ExecuteMode = c.ExecuteConfig().Mode
	}
	return command.Kafka.Build(ep, in, &cr, id)
}
