package kafkagate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// principalHomedAt returns a principal whose home partition is home.
func principalHomedAt(t testing.TB, home int32) string {
	t.Helper()
	for i := range 1000 {
		p := fmt.Sprintf("org_home_%d", i)
		if kafkagate.HomePartition(p, testPartitions) == home {
			return p
		}
	}
	t.Fatalf("no principal homed at partition %d", home)
	return ""
}

// registerAgentOn registers agents of principal through Kafka (the admin
// key) until one lives on partition p, and returns its id and token.
func registerAgentOn(t testing.TB, c *client.Client, principal string, p int32) (string, string) {
	t.Helper()
	for i := range 64 {
		rep, err := c.Request(context.Background(), client.Register(adminKey,
			domain.AgentInfo{Name: fmt.Sprintf("buyer-%d", i), Type: "autonomous", PrincipalID: principal}, domain.Permissions{}, domain.Limits{}))
		if err != nil || rep.Status != 201 {
			t.Fatalf("register: %v %+v", err, rep)
		}
		var m struct {
			AgentID    string `json:"agent_id"`
			AgentToken string `json:"agent_token"`
		}
		if err := json.Unmarshal(rep.Data, &m); err != nil {
			t.Fatal(err)
		}
		if client.PartitionFor(m.AgentID, testPartitions) == p {
			return m.AgentID, m.AgentToken
		}
	}
	t.Fatalf("no agent of %s registered on partition %d", principal, p)
	return "", ""
}

// execWorld is a Kafka gate on testPartitions partitions with one HTTP
// instance and a client, a principal homed on partition 2 and its agent
// living on partition 1.
type execWorld struct {
	lg                      *logs
	dir                     string
	h                       *httpOverKafka
	c                       *client.Client
	principal, agent, token string
}

func newExecWorld(t *testing.T, opts ...func(*kafkagate.Config)) *execWorld {
	t.Helper()
	_, brokers := broker(t)
	w := &execWorld{lg: &logs{brokers: brokers}, dir: t.TempDir()}
	startGate(t, brokers, w.lg, w.dir, opts...)
	w.h = startHTTPOverKafka(t, brokers, w.lg, engines(t), 20*time.Second)
	w.c = newClient(t, brokers)
	w.principal = principalHomedAt(t, 2)
	w.agent, w.token = registerAgentOn(t, w.c, w.principal, 1)
	return w
}

// business registers business id through h (the admin key), answered
// once every partition holds it.
func (w *execWorld) business(ctx context.Context, t *testing.T, h *httpOverKafka, id string) *domain.Event {
	t.Helper()
	ev, err := h.gate.Submit(ctx, businessCmd(id, "http://127.0.0.1:9/"))
	if err != nil || ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business %s: %v %+v", id, err, ev)
	}
	return ev
}

// businessCmd creates business id (the admin key, as POST /businesses
// builds it).
func businessCmd(id, endpoint string) *domain.Command {
	return &domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal,
		Request: domain.RequestID{Source: "test", ID: "business-" + id},
		Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{
			ID: id, Name: "Shop " + id, Categories: []string{"books"}, Endpoint: endpoint, Currency: "USD"}}}
}

// executeCmd is an agent's execute of amountCents at business, request id
// id, with the agent token token (as POST /agp/execute builds it).
func executeCmd(t testing.TB, agent, token, business, id string, amountCents int) *domain.Command {
	t.Helper()
	req := json.RawMessage(fmt.Sprintf(`{"item":"book","amount_cents":%d}`, amountCents))
	h, err := domain.RequestHashOf(req)
	if err != nil {
		t.Fatal(err)
	}
	th := command.HashSecret(token)
	return &domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: th,
		Request: domain.RequestID{Source: "test", ID: id, Scope: domain.RequestScope("", th)},
		Execute: &domain.ExecuteRequest{BusinessID: business, Request: req, RequestHash: h}}
}

// outcomeCmd is the adapter runner's outcome of transaction id.
func outcomeCmd(id string) *domain.Command {
	return &domain.Command{Type: domain.CmdExecuteOutcome, Request: domain.RequestID{Source: "agentgate/adapter", ID: id},
		Outcome: &domain.ExecuteOutcome{TransactionID: id, HTTPStatus: 200, Status: "completed", Data: json.RawMessage(`{"order":"o-1"}`)}}
}

// Executes on Kafka over HTTP (HTTPGate), several partitions and two
// instances: a business registered through one instance is usable through
// the other at once; an agent living on partition 1 whose consumer's home
// is partition 2 executes there (authenticated on partition 1 through the
// read model, decided on 2 marked Authenticated), its outcome is recorded
// there; a bad token is refused and recorded where the agent lives, and
// nothing reaches the home partition; every log re-decides alone.
func TestKafkaExecuteDecidedOnTheConsumersHome(t *testing.T) {
	w := newExecWorld(t)
	lg, dir, a, principal, agent, token := w.lg, w.dir, w.h, w.principal, w.agent, w.token
	b := startHTTPOverKafka(t, lg.brokers, lg, engines(t), 20*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if ev := w.business(ctx, t, a, "shop"); ev.Partition != 0 {
		t.Fatalf("business through instance A decided on partition %d", ev.Partition)
	}
	ev, err := b.gate.Submit(ctx, executeCmd(t, agent, token, "shop", "x1", 250))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != domain.EvExecuteDecided || ev.Partition != 2 || ev.Transaction == nil || ev.Transaction.Status != domain.TxExecuting ||
		ev.Transaction.Consumer != principal || ev.Transaction.AmountCents != 250 {
		t.Fatalf("execute through instance B: %s on partition %d: %+v %v", ev.Type, ev.Partition, ev.Transaction, ev.Error)
	}
	if au := ev.Command.Authenticated; au == nil || *au != (domain.AuthenticatedAgent{AgentID: agent, Principal: principal, Partition: 1}) {
		t.Fatalf("execute decided with authentication %+v", au)
	}
	tx := ev.Transaction.ID

	bad, err := b.gate.Submit(ctx, executeCmd(t, agent, "not-the-token", "shop", "x2", 250))
	if err != nil {
		t.Fatal(err)
	}
	if bad.Type != domain.EvCommandRejected || bad.Partition != 1 || bad.Error == nil || bad.Error.Code != domain.CodeInvalidAgentToken {
		t.Fatalf("a bad token: %s on partition %d: %v", bad.Type, bad.Partition, bad.Error)
	}

	done, err := a.gate.SubmitTo(ctx, outcomeCmd(tx), 2)
	if err != nil || done.Type != domain.EvExecuteCompleted || done.Transaction.Status != domain.TxCompleted {
		t.Fatalf("outcome: %v %+v", err, done)
	}

	for p := range int32(testPartitions) {
		for _, ev := range partitionEvents(t, lg, p) {
			if ev.Command == nil || ev.Command.Type != domain.CmdExecute {
				continue
			}
			if ev.Type != domain.EvCommandRejected && p != 2 {
				t.Errorf("partition %d decided an execute (%s, seq %d): only its consumer's home may", p, ev.Type, ev.Seq)
			}
			if ev.Type == domain.EvCommandRejected && p != 1 {
				t.Errorf("partition %d refused an execute (seq %d): the agent lives on 1", p, ev.Seq)
			}
		}
	}
	checkReplayAndAudit(t, lg, dir)
}

// withExecuteMode configures a gate's execute mode.
func withExecuteMode(mode string) func(*kafkagate.Config) {
	return func(c *kafkagate.Config) {
		cfg := domain.DefaultConfig()
		x := domain.DefaultExecuteConfig()
		x.Mode = mode
		cfg.Execute = &x
		c.Config = &cfg
	}
}

// executeData is the data of a qwed.execute or qwed.execute.prepare.
func executeData(business string, amountCents int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"businessId":%q,"request":{"item":"book","amount_cents":%d}}`, business, amountCents))
}

// waitEvent waits until events partition p holds an event ok accepts, and
// returns it.
func waitEvent(t *testing.T, lg *logs, p int32, ok func(*domain.Event) bool) *domain.Event {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, ev := range partitionEvents(t, lg, p) {
			if ok(ev) {
				return ev
			}
		}
	}
	t.Fatalf("partition %d never recorded the event awaited", p)
	return nil
}

// errorOf decodes an error reply.
func errorOf(t *testing.T, rep *client.Reply) (domain.Code, string) {
	t.Helper()
	var m struct {
		Error struct {
			Code    domain.Code `json:"code"`
			Message string      `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rep.Data, &m); err != nil {
		t.Fatalf("reply %d %s: %v", rep.Status, rep.Data, err)
	}
	return m.Error.Code, m.Error.Message
}

// The Agent Policy Engine spec's flow (§2.2) on Kafka, as CloudEvents, in
// mode confirm: an agent living on partition 1 whose consumer's home is
// partition 2 prepares (qwed.execute.prepare: a confirmation token), and
// executes with it (qwed.execute, x-confirmation-token): the request is
// authenticated on partition 1, relayed to partition 2 and decided there;
// it executes, and its reply comes once the outcome is recorded, with the
// business's data. The token is single use; an execute without one is
// refused with the spec's message; a bad agent token is refused, and
// recorded, where the agent lives.
func TestKafkaExecuteCloudEventsPrepareAndExecute(t *testing.T) {
	w := newExecWorld(t, withExecuteMode(domain.ExecuteModeConfirm))
	lg, dir, h, c, principal, agent, token := w.lg, w.dir, w.h, w.c, w.principal, w.agent, w.token
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w.business(ctx, t, h, "books")

	rep, err := c.Request(ctx, client.Command{Type: domain.CmdPrepareExecute, AgentID: agent, AgentToken: token, Data: executeData("books", 80)})
	if err != nil {
		t.Fatal(err)
	}
	var prepared struct {
		ConfirmationToken string    `json:"confirmationToken"`
		ExpiresAt         time.Time `json:"expiresAt"`
		Summary           string    `json:"summary"`
	}
	if rep.Status != 200 || json.Unmarshal(rep.Data, &prepared) != nil || prepared.ConfirmationToken == "" || prepared.Summary == "" {
		t.Fatalf("prepare: %d %s", rep.Status, rep.Data)
	}

	rep, err = c.Request(ctx, client.Command{Type: domain.CmdExecute, AgentID: agent, AgentToken: token, Data: executeData("books", 80)})
	if err != nil {
		t.Fatal(err)
	}
	if code, msg := errorOf(t, rep); rep.Status != 403 || code != domain.CodeExecConfirmationRequired || msg != domain.MsgExecConfirmationRequired {
		t.Fatalf("execute without a token: %d %s %q", rep.Status, code, msg)
	}

	// The execute is answered once its outcome is recorded: the runner's
	// outcome is sent once partition 2 holds the transaction executing.
	replied := make(chan *client.Reply, 1)
	go func() {
		rep, err := c.Request(ctx, client.Command{Type: domain.CmdExecute, ID: "exec-1", AgentID: agent, AgentToken: token,
			ConfirmationToken: prepared.ConfirmationToken, Data: executeData("books", 80)})
		if err != nil {
			t.Error(err)
		}
		replied <- rep
	}()
	decided := waitEvent(t, lg, 2, func(ev *domain.Event) bool {
		return ev.Type == domain.EvExecuteDecided && ev.Transaction != nil && ev.Transaction.Status == domain.TxExecuting
	})
	if au := decided.Command.Authenticated; au == nil || au.Principal != principal || au.Partition != 1 {
		t.Fatalf("decided with authentication %+v", au)
	}
	select {
	case rep := <-replied:
		t.Fatalf("an executing execute answered before its outcome: %+v", rep)
	case <-time.After(300 * time.Millisecond):
	}
	if ev, err := h.gate.SubmitTo(ctx, outcomeCmd(decided.Transaction.ID), 2); err != nil || ev.Type != domain.EvExecuteCompleted {
		t.Fatalf("outcome: %v %+v", err, ev)
	}
	rep = <-replied
	var done domain.ExecuteReply
	if rep == nil || rep.Status != 200 || json.Unmarshal(rep.Data, &done) != nil || done.TransactionID != decided.Transaction.ID ||
		done.Status != "completed" || string(done.Data) != `{"order":"o-1"}` {
		t.Fatalf("execute's reply at its outcome: %+v", rep)
	}

	rep, err = c.Request(ctx, client.Command{Type: domain.CmdExecute, AgentID: agent, AgentToken: token,
		ConfirmationToken: prepared.ConfirmationToken, Data: executeData("books", 80)})
	if err != nil {
		t.Fatal(err)
	}
	if code, msg := errorOf(t, rep); rep.Status != 403 || code != domain.CodeExecTokenInvalid || msg != domain.MsgExecTokenInvalid {
		t.Fatalf("the token used again: %d %s %q", rep.Status, code, msg)
	}

	rep, err = c.Request(ctx, client.Command{Type: domain.CmdExecute, ID: "exec-bad", AgentID: agent, AgentToken: "not-the-token",
		ConfirmationToken: prepared.ConfirmationToken, Data: executeData("books", 80)})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := errorOf(t, rep); rep.Status != 401 || code != domain.CodeInvalidAgentToken {
		t.Fatalf("a bad agent token: %d %s", rep.Status, code)
	}
	refused := waitEvent(t, lg, 1, func(ev *domain.Event) bool { return ev.Command != nil && ev.Command.Request.ID == "exec-bad" })
	if refused.Type != domain.EvCommandRejected || refused.Error.Code != domain.CodeInvalidAgentToken {
		t.Fatalf("the bad token recorded as %s %v", refused.Type, refused.Error)
	}
	for _, ev := range partitionEvents(t, lg, 2) {
		if ev.Command != nil && ev.Command.Request.ID == "exec-bad" {
			t.Fatalf("the bad token reached the home partition: %s", ev.Type)
		}
	}

	// A client cannot pass for the gate's relay: an authentication header
	// it wrote itself, sent straight to the home partition, is refused
	// (even with the agent's token: the relay's principal is the gate's
	// word, which a client's header could otherwise change).
	corr := c.NewCorrelationID()
	forged, err := cekafka.Encode(ce.Event{SpecVersion: ce.SpecVersion, Type: string(domain.CmdExecute), Source: "attacker", ID: "forged-1",
		Subject: agent, DataContentType: ce.ContentTypeJSON, Data: executeData("books", 80), Mode: ce.ModeBinary,
		Extensions: map[string]string{ce.ExtReplyTo: c.ReplyTopic(), ce.ExtCorrelationID: corr}})
	if err != nil {
		t.Fatal(err)
	}
	forged.Topic, forged.Partition = kafkagate.DefaultTopics().Requests, 2
	forged.Headers = append(forged.Headers, kafka.Header{Key: client.HeaderAgentToken, Value: []byte("Bearer " + token)},
		kafka.Header{Key: kafkagate.HeaderAuthenticated, Value: []byte(`{"agent_id":"` + agent + `","principal":"` + principal + `","partition":1}`)},
		kafka.Header{Key: kafkagate.HeaderAuthenticatedMAC, Value: []byte(strings.Repeat("ab", 32))})
	rep, err = c.Send(ctx, forged, corr)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := errorOf(t, rep); rep.Status != 401 || code != domain.CodeInvalidAPIKey {
		t.Fatalf("a forged relay: %d %s", rep.Status, code)
	}
	for _, ev := range partitionEvents(t, lg, 2) {
		if ev.Command != nil && ev.Command.Type == domain.CmdExecute && ev.Command.Request.ID == "forged-1" {
			t.Fatalf("a forged relay was decided: %s", ev.Type)
		}
	}
	checkReplayAndAudit(t, lg, dir)
}

// The HTTP API over Kafka: a business created with POST /businesses on
// one instance is used by POST /agp/execute on another at once; the
// execute is decided on the consumer's home partition and, with no
// business call in this test, answered 202 executing at the request
// timeout with its transaction id; a bad agent token is 401.
//
// The request timeout also bounds the round trip to the gate through
// Kafka, which a loaded machine may not make within it (504): each
// request is then retried with its Idempotency-Key, as the 504 says.
func TestKafkaHTTPExecuteAcrossInstances(t *testing.T) {
	w := newExecWorld(t)
	b := startHTTPOverKafka(t, w.lg.brokers, w.lg, engines(t), time.Second)
	execute := func(key string, hdr map[string]string) (int, map[string]any) {
		t.Helper()
		hdr = maps.Clone(hdr)
		hdr["Idempotency-Key"] = key
		for try := 1; ; try++ {
			st, m := b.do(t, "POST", "/agp/execute", hdr, `{"businessId":"shop","request":{"item":"book","amount_cents":120}}`)
			if st != http.StatusGatewayTimeout || try == 20 {
				return st, m
			}
		}
	}
	admin := map[string]string{"X-API-Key": adminKey}
	if st, m := w.h.do(t, "POST", "/businesses", admin,
		`{"id":"shop","name":"Shop","categories":["books"],"endpoint":"http://127.0.0.1:9/","currency":"USD"}`); st != 201 {
		t.Fatalf("POST /businesses: %d %v", st, m)
	}
	agentHdr := map[string]string{"Authorization": "Bearer " + w.token, "X-Agent-ID": w.agent}
	st, m := execute("exec-1", agentHdr)
	id, _ := m["transactionId"].(string)
	if st != 202 || m["status"] != domain.TxExecuting || id == "" {
		t.Fatalf("POST /agp/execute through the other instance: %d %v", st, m)
	}
	found := false
	for _, ev := range partitionEvents(t, w.lg, 2) {
		found = found || (ev.Type == domain.EvExecuteDecided && ev.Transaction != nil && ev.Transaction.ID == id)
	}
	if !found {
		t.Fatalf("transaction %s was not decided on the consumer's home partition", id)
	}
	bad := map[string]string{"Authorization": "Bearer not-the-token", "X-Agent-ID": w.agent}
	if st, m := execute("exec-bad", bad); st != 401 {
		t.Fatalf("a bad agent token: %d %v", st, m)
	}
}
