package kafkagate

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// ForwardedType is the CloudEvent type of a message on the forwarded
// topic.
const ForwardedType = kafkaout.ForwardedType

// forwardMessage is the message on the forwarded topic (partition among n
// by the receiver, Topic left to the caller) of a forwarded A2A verdict
// recorded at seq ev.Seq of events partition p: a binary-mode CloudEvent
// of type ForwardedType whose data is the AgentMessage as recorded, keyed
// by the receiver, id "P-SEQ", time the verdict's, correlationid the
// request's id, and the verdict in the qwed-a2a-* headers. ok is false for
// any other event (a verdict of another status, another event type).
func forwardMessage(p int32, ev *domain.Event, n int) (kafka.Message, bool) {
	v := ev.A2AVerdict
	if ev.Type != domain.EvA2AVerdict || v == nil || v.Status != a2a.StatusForwarded || ev.Command == nil || ev.Command.A2A == nil {
		return kafka.Message{}, false
	}
	data, err := json.Marshal(ev.Command.A2A)
	if err != nil {
		return kafka.Message{}, false
	}
	m, err := cekafka.Encode(ce.Event{
		SpecVersion: ce.SpecVersion, Type: ForwardedType, Source: ce.ReplySource,
		ID: fmt.Sprintf("%d-%d", p, ev.Seq), Subject: v.Receiver, Time: ev.Time.UTC(),
		DataContentType: ce.ContentTypeJSON, Data: data, Mode: ce.ModeBinary,
		Extensions: map[string]string{ce.ExtPartitionKey: v.Receiver, ce.ExtCorrelationID: ev.Command.Request.ID},
	})
	if err != nil {
		return kafka.Message{}, false
	}
	m.Partition = int(PartitionFor(v.Receiver, n))
	m.Headers = append(m.Headers,
		kafka.Header{Key: HeaderA2AStatus, Value: []byte(v.Status)},
		kafka.Header{Key: HeaderA2AEngine, Value: []byte(v.Engine)},
		kafka.Header{Key: HeaderA2ATraceID, Value: []byte(v.TraceID)},
		kafka.Header{Key: HeaderA2AAttestation, Value: []byte(v.Attestation)},
		kafka.Header{Key: HeaderA2ASender, Value: []byte(v.Sender)},
		kafka.Header{Key: HeaderEventsPartition, Value: []byte(strconv.Itoa(int(p)))},
		kafka.Header{Key: HeaderEventsSeq, Value: strconv.AppendUint(nil, ev.Seq, 10)},
	)
	if v.Shadow {
		m.Headers = append(m.Headers, kafka.Header{Key: HeaderA2AShadow, Value: []byte("true")})
	}
	return m, true
}

// retryAfter is the Retry-After of a rate-limited verdict: whole seconds,
// rounded up; "" for any other event.
func retryAfter(ev *domain.Event) string {
	if ev == nil || ev.A2AVerdict == nil || ev.A2AVerdict.RetryAfterMs <= 0 {
		return ""
	}
	return strconv.FormatInt((ev.A2AVerdict.RetryAfterMs+999)/1000, 10)
}
