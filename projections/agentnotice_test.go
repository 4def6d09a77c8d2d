package projections

import (
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// QWED-Agent spec v1.1 §2.3: a blocked decision raises one delivery per
// webhook of its principal that names agent_blocked. A store restored
// from the log by the fold's decoder (the Kafka partition stores'
// restore, eventjson.DecodeFoldEvent, which skips the decision's error
// and verification) holds the same deliveries, key for key; a store told
// the principal's home is another partition (Options.NoticeHome) raises
// none for the decision, and one for the relayed notice.
func TestAgentSpec_2_3_NoticeDeliveries(t *testing.T) {
	live := newTestGateWith(t, 1, Options{NoActivity: true})
	live.keepEvents = true
	live.st.Config.AgentNotices = true
	agent := live.register("a", 1, domain.Limits{})
	named := live.hook("org_1", domain.OpCreate, "", "https://a.example/h", domain.NoticeAgentBlocked).Webhook.ID
	live.hook("org_1", domain.OpCreate, "", "https://b.example/h")
	live.hook("org_2", domain.OpCreate, "", "https://c.example/h", domain.NoticeAgentBlocked)
	denied := live.verify(agent, "v1", "c1", 1, domain.Action{Type: "delete_everything", Target: "/etc/shadow"})
	live.verify(agent, "v2", "c1", 2, domain.Action{Type: "calculate", Query: "1+1"})
	live.flush()
	if denied.Decided.Decision != domain.Denied || denied.Decided.Notify == nil {
		t.Fatalf("decision %s notify %+v", denied.Decided.Decision, denied.Decided.Notify)
	}
	ds, _, err := live.store.Deliveries(domain.AdminPrincipal, DeliveryFilter{}, "", 100, 0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %+v %v, want one", ds, err)
	}
	d := ds[0]
	if d.Kind != domain.NoticeAgentBlocked || d.WebhookID != named || d.Consumer != "org_1" || d.Seq != denied.Seq ||
		d.ID != domain.DeliveryID(0, denied.Seq, 0, named) || d.Decision == nil || d.Decision.Code != denied.Error.Code ||
		d.Decision.Check == "" || d.Message != denied.Error.Code.Description() || d.Status != domain.DeliveryPending {
		t.Fatalf("delivery %+v decision %+v", d, d.Decision)
	}

	restored := newTestGateWith(t, 1000, Options{NoActivity: true})
	restored.st.Config.AgentNotices = true
	for _, ev := range live.allEvents {
		p, err := eventjson.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		folded, err := eventjson.DecodeFoldEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		restored.add(folded)
	}
	restored.flush()
	if diff, err := Equal(live.store, restored.store); err != nil || diff != "" {
		t.Fatalf("the restored store differs: %s %v", diff, err)
	}

	away := newTestGateWith(t, 1000, Options{NoticeHome: func(string) int32 { return 3 }})
	away.st.Config.AgentNotices = true
	for _, ev := range live.allEvents {
		away.add(ev)
	}
	n, _ := domain.AgentNoticeOf(denied)
	relayed := away.do(&domain.Command{Type: domain.CmdAgentBlocked, Principal: "org_1", Request: domain.AgentBlockedRequest(0, denied.Seq), AgentBlocked: n})
	away.flush()
	ds, _, _ = away.store.Deliveries(domain.AdminPrincipal, DeliveryFilter{Kind: domain.NoticeAgentBlocked}, "", 100, 0)
	if relayed.Type != domain.EvAgentBlockRelayed || len(ds) != 1 || ds[0].Seq != relayed.Seq || ds[0].Decision.Seq != denied.Seq {
		t.Fatalf("away from home: %s, deliveries %+v", relayed.Type, ds)
	}
}
