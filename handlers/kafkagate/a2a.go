package kafkagate

import (
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// forwardMessage is the message on the forwarded topic (partition among n
// by the receiver, Topic left to the caller) of a forwarded A2A verdict
// recorded at seq ev.Seq of events partition p: a binary-mode CloudEvent
// of type qwed.a2a.forwarded whose data is the AgentMessage as recorded, keyed
// by the receiver, id "P-SEQ", time the verdict's, correlationid the
// request's id, and the verdict in the qwed-a2a-* headers. ok is false for
// any other event (a verdict of another status, another event type).
func forwardMessage(p int32, ev *domain.Event, n int) (kafka.Message, bool) {
	v := ev.A2AVerdict
	if ev.Type != domain.EvA2AVerdict || v == nil || v.Status != a2a.StatusForwarded || ev.Command == nil || ev.Command.A2A == nil {
		return kafka.Message{}, false
	}
	data, err := kafkaout.MarshalA2A(ev.Command.A2A)
	if err != nil {
		return kafka.Message{}, false
	}
	// The binary mode of cekafka.Encode, written out: the SDK's event
	// was a tenth of a forward's cost (the fixture pins the bytes).
	seq := strconv.AppendUint(nil, ev.Seq, 10)
	part := strconv.AppendInt(nil, int64(p), 10)
	recv := []byte(v.Receiver)
	h := make([]kafka.Header, 0, 17)
	h = append(h,
		kafka.Header{Key: cekafka.HeaderPrefix + "specversion", Value: []byte(ce.SpecVersion)},
		kafka.Header{Key: cekafka.HeaderPrefix + "id", Value: append(append(append([]byte(nil), part...), '-'), seq...)},
		kafka.Header{Key: cekafka.HeaderPrefix + "source", Value: []byte(ce.ReplySource)},
		kafka.Header{Key: cekafka.HeaderPrefix + "type", Value: []byte(kafkaout.ForwardedType)},
		kafka.Header{Key: cekafka.HeaderPrefix + "subject", Value: recv},
		kafka.Header{Key: cekafka.HeaderPrefix + "time", Value: ev.Time.UTC().AppendFormat(nil, time.RFC3339Nano)},
		kafka.Header{Key: cekafka.HeaderPrefix + ce.ExtCorrelationID, Value: []byte(ev.Command.Request.ID)},
		kafka.Header{Key: cekafka.HeaderPrefix + ce.ExtPartitionKey, Value: recv},
		kafka.Header{Key: cekafka.HeaderContentType, Value: []byte(ce.ContentTypeJSON)},
		kafka.Header{Key: kafkaout.HeaderA2AStatus, Value: []byte(v.Status)},
		kafka.Header{Key: kafkaout.HeaderA2AEngine, Value: []byte(v.Engine)},
		kafka.Header{Key: kafkaout.HeaderA2ATraceID, Value: []byte(v.TraceID)},
		kafka.Header{Key: kafkaout.HeaderA2AAttestation, Value: []byte(v.Attestation)},
		kafka.Header{Key: kafkaout.HeaderA2ASender, Value: []byte(v.Sender)},
		kafka.Header{Key: kafkaout.HeaderEventsPartition, Value: part},
		kafka.Header{Key: kafkaout.HeaderEventsSeq, Value: seq},
	)
	m := kafka.Message{Partition: int(PartitionFor(v.Receiver, n)), Key: recv, Value: data, Headers: h}
	if v.Shadow {
		m.Headers = append(m.Headers, kafka.Header{Key: kafkaout.HeaderA2AShadow, Value: []byte("true")})
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
