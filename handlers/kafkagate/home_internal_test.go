package kafkagate

import (
	"strings"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/ce"
)

// Routing of the consumer policy engine's commands: a business change is
// principal-wide (partition 0, copied); a consumer's policy or webhook
// change, and an agent's prepare or execute once authenticated, go to the
// consumer's home partition; before, an agent's command goes to its
// agent's partition (authenticated there), and so does one the gate
// refused (Authenticated without a principal).
func TestRouteConsumerScoped(t *testing.T) {
	if !broadcast(domain.CmdBusiness) {
		t.Fatal("a business change is not principal-wide")
	}
	home := domain.HomeKey("org_a")
	for _, c := range []struct {
		name string
		cmd  domain.Command
		want string
	}{
		{"policy with the consumer's key", domain.Command{Type: domain.CmdPolicy, Principal: "org_a"}, home},
		{"webhook with the consumer's key", domain.Command{Type: domain.CmdWebhook, Principal: "org_a"}, home},
		{"policy with the admin key", domain.Command{Type: domain.CmdPolicy, Principal: domain.AdminPrincipal,
			Policy: &domain.PolicyChange{Op: domain.OpCreate, Consumer: "org_a"}}, home},
		{"webhook with the admin key", domain.Command{Type: domain.CmdWebhook, Principal: domain.AdminPrincipal,
			Webhook: &domain.WebhookChange{Op: domain.OpCreate, Webhook: domain.Webhook{Consumer: "org_a"}}}, home},
		{"execute before authentication", domain.Command{Type: domain.CmdExecute, AgentID: "agt_1", TokenHash: "h"}, "agt_1"},
		{"prepare authenticated", domain.Command{Type: domain.CmdPrepareExecute, AgentID: "agt_1",
			Authenticated: &domain.AuthenticatedAgent{AgentID: "agt_1", Principal: "org_a", Partition: 2}}, home},
		{"execute refused where the agent lives", domain.Command{Type: domain.CmdExecute, AgentID: "agt_1",
			Authenticated: &domain.AuthenticatedAgent{AgentID: "agt_1", Partition: 2}}, "agt_1"},
		{"verify_action keeps its agent", domain.Command{Type: domain.CmdVerifyAction, AgentID: "agt_1", Principal: "org_a"}, "agt_1"},
	} {
		if got := RouteKey(&c.cmd); got != c.want {
			t.Errorf("%s: RouteKey %q, want %q", c.name, got, c.want)
		}
	}
	if got, want := HomePartition("org_a", 4), PartitionFor(home, 4); got != want {
		t.Fatalf("HomePartition %d, want %d", got, want)
	}
}

// The signature of a relayed authentication covers the request it came
// with: moved onto another request (another id, subject or data), or
// altered, it no longer verifies.
func TestRelaySignatureBindsTheRequest(t *testing.T) {
	key := MACKey("admin-hash")
	auth := []byte(`{"agent_id":"agt_1","principal":"org_a","partition":1}`)
	req := ce.Event{Source: "s", ID: "1", Type: string(domain.CmdExecute), Subject: "agt_1", Data: []byte(`{"businessId":"b"}`)}
	mac := sign(key, relaySigned(auth, &req))
	if !verifyMAC(key, relaySigned(auth, &req), mac) {
		t.Fatal("the relay's own signature does not verify")
	}
	for name, alter := range map[string]func(r *ce.Event, a *[]byte){
		"id":      func(r *ce.Event, _ *[]byte) { r.ID = "2" },
		"subject": func(r *ce.Event, _ *[]byte) { r.Subject = "agt_2" },
		"data":    func(r *ce.Event, _ *[]byte) { r.Data = []byte(`{"businessId":"c"}`) },
		"type":    func(r *ce.Event, _ *[]byte) { r.Type = string(domain.CmdPrepareExecute) },
		"auth":    func(_ *ce.Event, a *[]byte) { *a = []byte(`{"agent_id":"agt_1","principal":"org_b","partition":1}`) },
	} {
		r, a := req, auth
		alter(&r, &a)
		if verifyMAC(key, relaySigned(a, &r), mac) {
			t.Errorf("the signature still verifies with another %s", name)
		}
	}
}

// FuzzRelayedAuthentication: whatever a request's authentication headers
// hold, the home partition accepts only the gate's own signature of that
// header for that request, naming the command's agent and a principal;
// nothing panics.
func FuzzRelayedAuthentication(f *testing.F) {
	g := &Gate{macKey: MACKey("admin-hash")}
	good := []byte(`{"agent_id":"agt_1","principal":"org_a","partition":1}`)
	req := ce.Event{Source: "s", ID: "1", Type: string(domain.CmdExecute), Subject: "agt_1", Data: []byte(`{}`)}
	f.Add(good, sign(g.macKey, relaySigned(good, &req)))
	f.Add([]byte(`{"agent_id":"agt_1","principal":"","partition":1}`), "00")
	f.Add([]byte(`{`), "zz")
	f.Fuzz(func(t *testing.T, auth []byte, mac string) {
		it := &item{req: req, msg: kafka.Message{Headers: []kafka.Header{
			{Key: HeaderAuthenticated, Value: auth}, {Key: HeaderAuthenticatedMAC, Value: []byte(mac)}}}}
		a, ok, rej := g.relayed(it, &domain.Command{Type: domain.CmdExecute, AgentID: "agt_1"})
		if !ok {
			t.Fatal("a request with the header reported without it")
		}
		// Hex digits of either case are the same signature.
		signed := strings.EqualFold(mac, sign(g.macKey, relaySigned(auth, &req)))
		if rej == nil && (!signed || a == nil || a.AgentID != "agt_1" || a.Principal == "") {
			t.Fatalf("accepted %q with mac %q: %+v", auth, mac, a)
		}
	})
}
