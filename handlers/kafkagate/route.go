package kafkagate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// Kafka headers of the gate (besides the ce_* headers of the CloudEvent).
const (
	// HeaderAPIKey carries a principal's API key (the X-API-Key of HTTP).
	HeaderAPIKey = "x-api-key"
	// HeaderMAC carries the HMAC-SHA256 (hex) of an internal command.
	HeaderMAC = "agentgate-mac"
	// HeaderStatus carries the HTTP status of a reply.
	HeaderStatus = "agentgate-status"
	// HeaderReason carries why a message went to the dead-letter topic.
	HeaderReason = "agentgate-reason"
	// HeaderOrigin carries the position (topic/partition/offset) of the
	// request behind a dead letter.
	HeaderOrigin = "agentgate-origin"
	// HeaderReplyTo carries, on a dead-lettered reply, the reply topic
	// that could not be written.
	HeaderReplyTo = "agentgate-replyto"
	// headerQWEDVersion carries a qwed.verify request's
	// QWED-Protocol-Version (QWED protocol v1.0 §9.2).
	headerQWEDVersion = "qwed-protocol-version"
	// HeaderForwarded marks a request forwarded to its agent's partition.
	HeaderForwarded = "agentgate-forwarded"
	// ContentTypeCommand is the datacontenttype of an internal command:
	// the data is a domain.Command, already authenticated by the sender.
	ContentTypeCommand = "application/vnd.agentgate.command+json"
)

// PartitionFor returns the partition of key among n: murmur2, as Kafka's
// Java client and kafka-go's Murmur2Balancer (kcat: -X
// partitioner=murmur2_random).
func PartitionFor(key string, n int) int32 { return kafkaout.PartitionFor(key, n) }

// RouteKey returns the Kafka key of a command: the home key of its
// consumer for a consumer-scoped command that names it (Consumer: a
// policy or webhook change, an agent's prepare or execute once
// authenticated), its agent (an agent's prepare or execute before: it is
// authenticated where the agent lives), the agent a registration mints,
// the sender of an A2A message (the partition that holds the token bucket
// of its pairs and, when an agent token sends it, that agent), or "" when
// the command is about no single agent.
func RouteKey(cmd *domain.Command) string {
	switch {
	case cmd.Type == domain.CmdRegisterAgent:
		return domain.AgentIDFor(cmd.Request)
	case cmd.Type == domain.CmdA2AMessage && cmd.A2A != nil:
		return cmd.A2A.SenderAgentID
	}
	if c := Consumer(cmd); c != "" {
		return domain.HomeKey(c)
	}
	return cmd.AgentID
}

// broadcast reports whether a command changes principal-wide state that
// every partition needs (API keys, tool registries, principals' path and
// egress policies, configuration, A2A trust boundaries, the business
// registry): decided on partition 0, copied by the others (global.go).
func broadcast(t domain.CommandType) bool {
	return t == domain.CmdIssuePrincipalKey || t == domain.CmdRevokePrincipalKey || t == domain.CmdPutToolRegistry || t == domain.CmdConfigure ||
		t == domain.CmdA2ABoundary || t == domain.CmdBusiness || t == domain.CmdPutPrincipalPermissions
}

// MACKey derives the key that signs internal commands from the admin key
// hash that every gate instance shares.
func MACKey(adminKeyHash string) []byte {
	h := sha256.Sum256([]byte("agentgate internal command\x00" + adminKeyHash))
	return h[:]
}

// sign returns the hex HMAC-SHA256 of value.
func sign(key, value []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(value)
	return hex.EncodeToString(m.Sum(nil))
}

// verifyMAC reports whether mac is the HMAC of value, in constant time.
func verifyMAC(key, value []byte, mac string) bool {
	want, err := hex.DecodeString(mac)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write(value)
	return hmac.Equal(m.Sum(nil), want)
}

// bearer returns the agent token of the header HeaderAgentToken
// ("Bearer <token>", the scheme's case ignored, as HTTP's Authorization).
func bearer(msg *kafka.Message) (string, bool) {
	v, ok := header(msg, kafkaout.HeaderAgentToken)
	const scheme = "bearer "
	if !ok || len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimSpace(v[len(scheme):])
	return tok, tok != ""
}

// header returns the value of the first header named name.
func header(msg *kafka.Message, name string) (string, bool) {
	for _, h := range msg.Headers {
		if h.Key == name {
			return string(h.Value), true
		}
	}
	return "", false
}
