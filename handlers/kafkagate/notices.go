package kafkagate

import (
	"encoding/json"
	"strconv"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// The notices of blocked agent decisions on Kafka (docs/ARCHITECTURE.md,
// "Notifying the principal of blocked decisions"). A DENIED decision is
// recorded on its agent's partition, naming the agent's principal
// (domain.ActionDecided.Notify); the principal's webhooks and deliveries
// live on its home partition (HomePartition). When the two differ, the
// agent's partition relays the notice there through an outbox (forward.go:
// once per decision across restarts, its cursor in NoticesGroup): a
// signed internal command (HeaderMAC, as HTTPGate's) of type
// domain.CmdAgentBlocked on the requests topic's home partition, whose
// request ID names the decision's partition and seq (a relay produced
// twice is recorded once). The home partition decides it into an
// agent.block_relayed event, which its projections turn into deliveries
// for its webhook runner. When the agent's partition is the home, its own
// projections deliver the notice: nothing is relayed.

// NoticesGroup is the consumer group whose committed offsets are the
// notices outboxes' cursors, for a gate of consumer group group.
func NoticesGroup(group string) string { return group + ".agent-notices" }

// noticeMark is in the encoding of every decision naming a principal to
// notify: a recovery decodes only the records that hold it.
var noticeMark = []byte(`"notify":{`)

// agentNotices is the outbox of the notices of partition p's blocked
// decisions that its principal's home partition delivers.
func (g *Gate) agentNotices() outboxKind {
	return outboxKind{
		what:      "notices of blocked agent decisions",
		keep:      func(ev *domain.Event) bool { _, ok := g.relayedNotice(ev); return ok },
		mark:      noticeMark,
		message:   g.noticeMessage,
		authentic: g.signedByGate,
	}
}

// relayedNotice returns the notice of ev when another partition, its
// principal's home, delivers it. An agent of the admin principal ("*")
// has none to relay: no webhook is the admin's, and the home refuses it.
func (g *Gate) relayedNotice(ev *domain.Event) (*domain.AgentNotice, bool) {
	if ev.Type != domain.EvActionDecided || ev.Decided == nil || ev.Decided.Notify == nil {
		return nil, false
	}
	n, ok := domain.AgentNoticeOf(ev)
	if !ok || n.Principal == domain.AdminPrincipal || HomePartition(n.Principal, g.partitions) == ev.Partition {
		return nil, false
	}
	return n, true
}

// noticeMessage is the relay of the notice of ev, a blocked decision of
// events partition p, on the requests topic's partition (among n) of its
// principal's home: a binary-mode CloudEvent of type qwed.agent.blocked,
// source domain.AgentBlockedSource and id "P/SEQ" (the command's request
// ID), its data the internal command, signed (HeaderMAC), and the events
// partition and seq it comes from in the headers (the outbox's recovery
// reads them).
func (g *Gate) noticeMessage(p int32, ev *domain.Event, n int) (kafka.Message, bool) {
	notice, ok := g.relayedNotice(ev)
	if !ok {
		return kafka.Message{}, false
	}
	req := domain.AgentBlockedRequest(p, ev.Seq)
	data, err := json.Marshal(&domain.Command{Type: domain.CmdAgentBlocked, Request: req, Principal: notice.Principal, AgentBlocked: notice})
	if err != nil {
		return kafka.Message{}, false
	}
	m, err := cekafka.Encode(ce.Event{
		SpecVersion: ce.SpecVersion, Type: string(domain.CmdAgentBlocked), Source: req.Source, ID: req.ID,
		Subject: notice.AgentID, Time: ev.Time.UTC(), DataContentType: ContentTypeCommand, Data: data, Mode: ce.ModeBinary,
	})
	if err != nil {
		return kafka.Message{}, false
	}
	m.Partition, m.Key = int(HomePartition(notice.Principal, n)), []byte(domain.HomeKey(notice.Principal))
	m.Headers = append(m.Headers,
		kafka.Header{Key: HeaderMAC, Value: []byte(sign(g.macKey, data))},
		kafka.Header{Key: kafkaout.HeaderEventsPartition, Value: strconv.AppendInt(nil, int64(p), 10)},
		kafka.Header{Key: kafkaout.HeaderEventsSeq, Value: strconv.AppendUint(nil, ev.Seq, 10)})
	return m, true
}

// signedByGate reports whether a record of the requests topic is an
// internal command signed by the gate: a client may write the requests
// topic, and a record of its own carrying the events headers must not
// pass for a relay already produced.
func (g *Gate) signedByGate(headers []kafka.Header, value []byte) bool {
	for _, h := range headers {
		if h.Key == HeaderMAC {
			return verifyMAC(g.macKey, value, string(h.Value))
		}
	}
	return false
}

// noticeHome is the home partition of consumer among the gate's
// partitions (projections.Options.NoticeHome).
func (g *Gate) noticeHome(consumer string) int32 { return HomePartition(consumer, g.partitions) }

// noticeHome is the home partition of consumer among the read model's
// partitions (projections.Options.NoticeHome).
func (m *ReadModel) noticeHome(consumer string) int32 { return HomePartition(consumer, m.partitions) }

// newNotices returns partition p's outbox of relayed notices.
func (g *Gate) newNotices(p int32, lg streams.Log) *forwarder {
	n := g.newOutbox(p, lg, g.agentNotices(), g.cfg.Topics.Requests, NoticesGroup(g.cfg.GroupID))
	n.hook = g.cfg.noticesHook
	return n
}
