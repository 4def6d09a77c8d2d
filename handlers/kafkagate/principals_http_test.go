package kafkagate_test

import (
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// The edge limit on principal-scoped writes on Kafka: the HTTP instance
// refuses a key's writes over it with QWED-AUTH-004 (429, Retry-After)
// before anything reaches the log (partition 0, where they are decided,
// does not move); another key is not held back.
func TestKafkaPrincipalWrites_EdgeRateLimit(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	cfg := domain.DefaultConfig()
	startGate(t, brokers, lg, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg })
	clock := a2aClock()
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second, func(c *httpapi.Config) {
		c.Clock, c.PrincipalWriteRateLimit = clock.Now, httpapi.RateLimit{PerPrincipal: 1, Burst: 3}
	})
	keyA, keyB := issueKeyOver(t, h, "org_a"), issueKeyOver(t, h, "org_b")
	gatetest.PrincipalWriteRateLimit(t, h.a2aHTTP(), keyA, "org_a", keyB, "org_b", 3,
		func() int { return len(partitionEvents(t, lg, 0)) }, clock.Advance)
}
