package kafkagate_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams"
)

// partitionEvents reads every event of events partition p.
func partitionEvents(t *testing.T, lg *logs, p int32) []*domain.Event {
	t.Helper()
	l, err := lg.open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []*domain.Event
	err = l.Read(context.Background(), 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return err
		}
		out = append(out, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitCopiedEverywhere waits until every partition but 0 holds a copy of
// partition 0's event seq (a Kafka request is answered by partition 0
// alone: the copies follow, within the followers' poll).
func waitCopiedEverywhere(t *testing.T, lg *logs, seq uint64) {
	t.Helper()
	for p := int32(1); p < testPartitions; p++ {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			copied := false
			for _, ev := range partitionEvents(t, lg, p) {
				copied = copied || (ev.Type == domain.EvPrincipalStateCopied && ev.Command.Copy.Seq >= seq)
			}
			if copied {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("partition %d never copied partition 0's seq %d", p, seq)
			}
		}
	}
}

// principalChanges are the principal-wide changes a partition folded, in
// its order: partition 0's own (decided for every partition), the
// others' copies of them; and the state those give.
func principalChanges(t *testing.T, events []*domain.Event, p int32) ([]domain.CopiedChange, *domain.State) {
	t.Helper()
	st := domain.NewState()
	var out []domain.CopiedChange
	for _, ev := range events {
		domain.Apply(st, ev)
		if c, ok := domain.CopyOf(ev); ok {
			if p != domain.GlobalPartition {
				t.Fatalf("partition %d decided a principal-wide command itself: %s at %d", p, ev.Type, ev.Seq)
			}
			out = append(out, c)
		}
		if ev.Type == domain.EvPrincipalStateCopied {
			out = append(out, ev.Command.Copy.Changes...)
		}
	}
	return out, st
}

// keysOf are the API key hashes of principal in st, sorted.
func keysOf(st *domain.State, principal string) []string {
	var out []string
	for h, p := range st.Keys {
		if p == principal {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// Principal-wide state on Kafka: two HTTP instances issuing and revoking
// one principal's keys at once; every change is decided on partition 0 in
// its order, and every other partition holds the same changes, copied, in
// the same order, and so the same keys. Each answer came once every
// partition had its copy, so the logs are complete when the last returns.
func TestKafkaGlobalKeysSameOnEveryPartition(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	startGate(t, brokers, lg, dir)
	hs := []*httpOverKafka{
		startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second),
		startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second),
	}
	admin := map[string]string{"X-API-Key": adminKey}
	const perWriter = 6
	var wg sync.WaitGroup
	errs := make(chan error, 2*perWriter*2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				// Issued through one instance, every other key revoked
				// through the other.
				st, k, err := hs[w].request("POST", "/principals/org_g/keys", admin, "")
				id, _ := k["key_id"].(string)
				if err != nil || st != http.StatusCreated || id == "" {
					errs <- fmt.Errorf("writer %d issue %d: %d %v %v", w, i, st, k, err)
					return
				}
				if i%2 == 1 {
					if st, b, err := hs[1-w].request("DELETE", "/principals/org_g/keys/"+id, admin, ""); err != nil || st != 200 || b["revoked"] != true {
						errs <- fmt.Errorf("writer %d revoke %d: %d %v %v", w, i, st, b, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	want, st0 := principalChanges(t, partitionEvents(t, lg, 0), 0)
	if len(want) != 2*perWriter+perWriter { // 12 issued, 6 revoked
		t.Fatalf("partition 0 decided %d principal-wide changes, want %d", len(want), 3*perWriter)
	}
	keys := keysOf(st0, "org_g")
	if len(keys) != perWriter {
		t.Fatalf("partition 0 holds %d keys of org_g, want %d", len(keys), perWriter)
	}
	for p := int32(1); p < testPartitions; p++ {
		got, st := principalChanges(t, partitionEvents(t, lg, p), p)
		if len(got) != len(want) {
			t.Fatalf("partition %d copied %d changes, want partition 0's %d", p, len(got), len(want))
		}
		for i := range want {
			if got[i].Seq != want[i].Seq || got[i].Type != want[i].Type {
				t.Fatalf("partition %d change %d: seq %d %s, partition 0's: seq %d %s", p, i, got[i].Seq, got[i].Type, want[i].Seq, want[i].Type)
			}
		}
		if k := keysOf(st, "org_g"); !slices.Equal(k, keys) {
			t.Fatalf("partition %d keys %v, partition 0's %v", p, k, keys)
		}
	}
	checkReplayAndAudit(t, lg, dir)
}

// checkReplayAndAudit re-decides every partition's log on its own, byte
// for byte (replay --verify: a partition's copies are enough to replay
// it), and audits every partition's chain and each copy against partition
// 0 (audit verify).
func checkReplayAndAudit(t *testing.T, lg *logs, dir string) {
	t.Helper()
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	var srcs []audit.Source
	for p := range int32(testPartitions) {
		d := replay.NewRedecider(kr.SignerFor("node_test"))
		l, err := lg.open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		err = l.Read(context.Background(), 1, func(r streams.Record) error {
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return err
			}
			if m := d.Next(ev, r.Payload); m != "" {
				t.Errorf("partition %d: re-deciding seq %d (%s): %s", p, ev.Seq, ev.Type, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, audit.LogSource(l, p))
	}
	all := audit.SourceFunc(func(ctx context.Context, fn func(audit.Record) error) error {
		for _, s := range srcs {
			if err := s.Each(ctx, fn); err != nil {
				return err
			}
		}
		return nil
	})
	rep, err := audit.Verify(context.Background(), all, nil, audit.Options{SkipSignatures: true})
	if err != nil || !rep.OK() {
		t.Fatalf("audit of every partition: %v %v", err, rep.Break)
	}
}

// registerGlobalOn registers an agent of org_g through Kafka on partition
// p with apiKey, the key of principal (its id is minted from the request
// id and the principal, picked so that the agent lands there).
func registerGlobalOn(t *testing.T, c *client.Client, apiKey, principal string, p int32, tag string) *client.Reply {
	t.Helper()
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-%d", tag, i)
		if kafkagate.PartitionFor(client.AgentIDFor(c.Source(), id, principal), testPartitions) != p {
			continue
		}
		cmd := client.Register(apiKey, domain.AgentInfo{Name: "g", Type: "autonomous", PrincipalID: "org_g"}, domain.Permissions{}, domain.Limits{})
		cmd.ID = id
		rep, err := c.Request(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
}

// A key issued and then revoked over HTTP: the answers come once every
// partition holds the change, so a Kafka request with the key on partition
// 1 is accepted after the issue and refused after the revocation, at once.
func TestKafkaGlobalRevocationRefusedOnAnotherPartition(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir())
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	admin := map[string]string{"X-API-Key": adminKey}

	st, k := h.do(t, "POST", "/principals/org_g/keys", admin, "")
	key, _ := k["api_key"].(string)
	id, _ := k["key_id"].(string)
	if st != http.StatusCreated || key == "" {
		t.Fatalf("issue: %d %v", st, k)
	}
	if rep := registerGlobalOn(t, c, key, "org_g", 1, "before"); rep.Status != http.StatusCreated {
		t.Fatalf("a registration on partition 1 with the key just issued: %d %s", rep.Status, rep.Data)
	}
	if st, b := h.do(t, "DELETE", "/principals/org_g/keys/"+id, admin, ""); st != 200 || b["revoked"] != true {
		t.Fatalf("revoke: %d %v", st, b)
	}
	if rep := registerGlobalOn(t, c, key, "org_g", 1, "after"); rep.Status != http.StatusUnauthorized {
		t.Fatalf("a registration on partition 1 with the key just revoked: %d %s", rep.Status, rep.Data)
	}
	// Partition 1 refused it on its copy of partition 0's revocation.
	var copied bool
	for _, ev := range partitionEvents(t, lg, 1) {
		if ev.Type == domain.EvPrincipalKeyRevoked {
			t.Fatalf("partition 1 decided the revocation itself (seq %d)", ev.Seq)
		}
		if ev.Type == domain.EvPrincipalStateCopied {
			for _, c := range ev.Command.Copy.Changes {
				copied = copied || (c.Type == domain.EvPrincipalKeyRevoked && c.KeyRevoked.KeyID == id)
			}
		}
	}
	if !copied {
		t.Fatal("partition 1 holds no copy of the revocation")
	}
}

// A gate that stops between partition 0's decision of a principal-wide
// change and the other partitions' copies of it (HoldCopies: nothing is
// copied) leaves the change on partition 0 only, and the HTTP answer never
// comes (504); the next gate on the same data dir copies it when it starts,
// and the same request then gets its answer.
func TestKafkaGlobalCopiedAfterRestart(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	g := startGate(t, brokers, lg, dir, kafkagate.HoldCopies)
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 2*time.Second)
	c := newClient(t, brokers)
	admin := map[string]string{"X-API-Key": adminKey, "Idempotency-Key": "issue-g-1"}

	st, body := h.do(t, "POST", "/principals/org_g/keys", admin, "")
	if st != http.StatusGatewayTimeout {
		t.Fatalf("issue while no partition copies: %d %v, want 504", st, body)
	}
	var decided *domain.Event
	for _, ev := range partitionEvents(t, lg, 0) {
		if ev.Type == domain.EvPrincipalKeyIssued {
			decided = ev
		}
	}
	if decided == nil || !decided.Command.Global {
		t.Fatalf("partition 0 did not decide the issue: %+v", decided)
	}
	for p := int32(1); p < testPartitions; p++ {
		for _, ev := range partitionEvents(t, lg, p) {
			if ev.Type == domain.EvPrincipalStateCopied || ev.Type == domain.EvPrincipalKeyIssued {
				t.Fatalf("partition %d holds %s before any copy", p, ev.Type)
			}
		}
	}
	g.stop()

	g2 := startGate(t, brokers, lg, dir)
	for try := 0; ; try++ {
		st, body = h.do(t, "POST", "/principals/org_g/keys", admin, "")
		if st == http.StatusCreated {
			break
		}
		if st != http.StatusGatewayTimeout || try == 10 {
			t.Fatalf("the same request once a gate copies: %d %v", st, body)
		}
	}
	if body["key_id"] != decided.KeyIssued.KeyID {
		t.Fatalf("the retry got key %v, partition 0 decided %s", body["key_id"], decided.KeyIssued.KeyID)
	}
	for p := int32(1); p < testPartitions; p++ {
		changes, st := principalChanges(t, partitionEvents(t, lg, p), p)
		if len(changes) != 1 || changes[0].Seq != decided.Seq || len(keysOf(st, "org_g")) != 1 {
			t.Fatalf("partition %d after the restart: changes %+v", p, changes)
		}
	}
	// The key was issued before the retry's answer: its plaintext went
	// to no one (a retry gets the recorded event without the secret), so
	// the registration uses the admin key: partition 1 serves again.
	if rep := registerGlobalOn(t, c, adminKey, domain.AdminPrincipal, 1, "restart"); rep.Status != http.StatusCreated {
		t.Fatalf("a registration on partition 1 after the restart: %d %s", rep.Status, rep.Data)
	}
	// A gate started after copies follows the changes topic from its last
	// copy (the offset the copy recorded) and copies what came
	// since: a key issued then registers on partition 1.
	g2.stop()
	startGate(t, brokers, lg, dir)
	st, k := h.do(t, "POST", "/principals/org_g/keys", map[string]string{"X-API-Key": adminKey}, "")
	key, _ := k["api_key"].(string)
	if st != http.StatusCreated || key == "" {
		t.Fatalf("issue after a second restart: %d %v", st, k)
	}
	if rep := registerGlobalOn(t, c, key, "org_g", 1, "second"); rep.Status != http.StatusCreated {
		t.Fatalf("a registration on partition 1 with a key issued after a second restart: %d %s", rep.Status, rep.Data)
	}
	checkReplayAndAudit(t, lg, dir)
}

// A principal-wide CloudEvent (qwed.a2a.boundary) read on another
// partition is forwarded to partition 0, decided there once, and copied
// by every other partition.
func TestKafkaGlobalCloudEventDecidedOnPartition0(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir())
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	id := ""
	for i := 0; id == ""; i++ {
		if s := fmt.Sprintf("boundary-%d", i); kafkagate.PartitionFor(s, testPartitions) == 2 {
			id = s
		}
	}
	rep, err := c.Request(context.Background(), client.Command{Type: domain.CmdA2ABoundary, ID: id, APIKey: adminKey,
		Data: map[string]string{"op": domain.A2AOpTrust, "agent": "agent-x"}})
	if err != nil || rep.Status != http.StatusOK {
		t.Fatalf("boundary change on partition 2: %v %+v", err, rep)
	}
	var decided *domain.Event
	for _, ev := range partitionEvents(t, lg, 0) {
		if ev.Type == domain.EvA2ABoundaryChanged {
			decided = ev
		}
	}
	if decided == nil || !decided.Command.Global || decided.Command.Request.ID != id {
		t.Fatalf("partition 0 did not decide the change: %+v", decided)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for p := int32(1); p < testPartitions; p++ {
		if err := h.reads.WaitCopied(ctx, p, decided.Seq); err != nil {
			t.Fatal(err)
		}
		changes, st := principalChanges(t, partitionEvents(t, lg, p), p)
		if len(changes) != 1 || changes[0].Seq != decided.Seq || changes[0].Principal != domain.AdminPrincipal {
			t.Fatalf("partition %d copied %+v", p, changes)
		}
		if b := st.A2A.Boundaries[domain.AdminPrincipal]; b == nil || !slices.Contains(b.Trusted, "agent-x") {
			t.Fatalf("partition %d boundary after the copy: %+v", p, b)
		}
	}
}

// While a partition's copy is late (no gate copies), HTTPGate's wait for
// it wakes the read model's follower with a backoff, not after each pass
// back to back: over a second of waiting the follower of partition 1
// (polling once a minute on its own) makes a few dozen passes at most.
func TestKafkaGlobalWaitCopiedBacksOff(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir(), kafkagate.HoldCopies)
	h := startHTTPOverKafkaPolling(t, brokers, lg, engines(t), 2*time.Second, time.Minute)
	admin := map[string]string{"X-API-Key": adminKey, "Idempotency-Key": "issue-backoff"}
	if st, body := h.do(t, "POST", "/principals/org_g/keys", admin, ""); st != http.StatusGatewayTimeout {
		t.Fatalf("issue while no partition copies: %d %v, want 504", st, body)
	}
	var decided *domain.Event
	for _, ev := range partitionEvents(t, lg, 0) {
		if ev.Type == domain.EvPrincipalKeyIssued {
			decided = ev
		}
	}
	if decided == nil {
		t.Fatal("partition 0 did not decide the issue")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	before := h.reads.Passes(1)
	if err := h.reads.WaitCopied(ctx, 1, decided.Seq); err == nil {
		t.Fatal("WaitCopied returned while no gate copies")
	}
	// 1+2+...+32 ms, then every 50 ms: about 26 wake-ups in a second.
	if n := h.reads.Passes(1) - before; n > 40 {
		t.Fatalf("the follower of partition 1 made %d passes in a second of waiting for a copy: a busy loop", n)
	}
}

// A new owner of a partition reads partition 0 before its first request:
// the last owner may have read a barrier (its offset committed, never read
// again) without copying the change, and the requests behind the barrier
// must be decided after the copy. While partition 0 cannot be opened, a
// request on partition 1 is not answered; once it opens, it is.
func TestKafkaGlobalNewOwnerReadsPartition0First(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	release := make(chan struct{})
	var released time.Time
	startGate(t, brokers, lg, t.TempDir(), kafkagate.WithChangesRead(func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	c := newClient(t, brokers)
	answered := make(chan time.Time, 1)
	go func() {
		registerGlobalOn(t, c, adminKey, domain.AdminPrincipal, 1, "first")
		answered <- time.Now()
	}()
	select {
	case at := <-answered:
		t.Fatalf("a request on partition 1 answered at %v while partition 0 could not be read", at)
	case <-time.After(500 * time.Millisecond):
	}
	released = time.Now()
	close(release)
	select {
	case at := <-answered:
		if at.Before(released) {
			t.Fatalf("answered at %v, before partition 0 was read (%v)", at, released)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer once partition 0 opened")
	}
}
