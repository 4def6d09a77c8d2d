package replay_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// frozenLog is the log of an embedded gate written by the binary of commit
// 7d57834, the last commit before the restructure of issue 12, and frozen
// with its projection store and signing keys (testdata/log-7d57834/README.md
// says how it was made and what it holds).
const frozenLog = "testdata/log-7d57834"

// TestReplayVerifyReproducesTheLogOf7d57834 is issue 12's promise as a
// regression test: replay --verify of a log written before the change
// still re-decides byte for byte. The frozen records are appended, as
// stored, to a fresh Pebble log; the frozen projection store of the gate
// that wrote them is the live store. The real Replay must rebuild
// projections equal to that store, key by key, and re-decide every
// recorded command (decisions, refusals, attestations under both signing
// keys, engine verdicts) and re-sign every checkpoint to the recorded
// bytes. A change to the decision rules, the event codec, the fold or the
// projections that alters what an existing input produces fails here.
func TestReplayVerifyReproducesTheLogOf7d57834(t *testing.T) {
	replayFrozen(t, frozenLog, 316)
}

// replayFrozen appends the frozen records of fixture, as stored, to a
// fresh Pebble log, opens the frozen projection store as the live store
// and the frozen keys, and runs the real Replay with verification: it
// must rebuild projections equal to the store key by key, re-decide each
// of the commands (there must be redecided of them) and re-sign each
// checkpoint to the recorded bytes.
func replayFrozen(t *testing.T, fixture string, redecided int) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	recs := readFrozenLog(t, filepath.Join(fixture, "log.jsonl"))
	log, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := log.Append(ctx, recs); err != nil {
		t.Fatalf("appending the frozen records: %v", err)
	}
	if err := streams.VerifyChain(ctx, log, 1); err != nil {
		t.Fatalf("the frozen log does not chain: %v", err)
	}

	live := openFrozenStore(t, filepath.Join(fixture, "state.jsonl"), filepath.Join(dir, "state"))
	defer live.Close()
	kr := openFrozenKeyring(t, fixture, dir)
	rep, err := replay.Replay(ctx, log, live, true, kr.SignerFor(frozenNodeID(t, fixture)))
	if err != nil {
		t.Fatal(err)
	}
	if rep.ProjectionDiff != "" {
		t.Errorf("projections rebuilt from the log differ from those the gate of %s wrote: %s", fixture, rep.ProjectionDiff)
	}
	for _, m := range rep.Mismatches {
		t.Errorf("re-deciding: %s", m)
	}
	if rep.Events != len(recs) || rep.Redecided != redecided {
		t.Errorf("replayed %d events and re-decided %d commands, want %d and %d", rep.Events, rep.Redecided, len(recs), redecided)
	}
}

// TestFrozenLogCoversTheEventTypes pins what the frozen log holds, so that
// a fixture made again from a thinner workload is caught rather than
// quietly testing less: every kind of event the gate of 7d57834 wrote
// for it, and the refusals and attestations among them.
func TestFrozenLogCoversTheEventTypes(t *testing.T) {
	counts := map[string]int{}
	attestations, signingKeys := 0, map[string]bool{}
	for _, r := range readFrozenLog(t, filepath.Join(frozenLog, "log.jsonl")) {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			t.Fatalf("decoding record %d: %v", r.Seq, err)
		}
		counts[string(ev.Type)]++
		if ev.Decided != nil && ev.Decided.Attestation != "" {
			attestations++
		}
		if ev.Checkpoint != nil {
			signingKeys[checkpointKID(t, ev.Checkpoint.Signature)] = true
		}
	}
	want := map[string]int{
		"action.decided": 194, "command.rejected": 53, "log.checkpointed": 18, "agent.registered": 11,
		"approvals.expired": 11, "execution.logged": 10, "principal.key_issued": 8, "qwed.verified": 8,
		"approval.resolved": 5, "agent.status_changed": 3, "agent.token_rotated": 3, "trust.changed": 2,
		"agent.token_revoked": 2, "principal.tools_set": 2, "trust.elevation_requested": 2,
		"gate.configured": 1, "principal.key_revoked": 1,
	}
	if !maps.Equal(counts, want) {
		t.Errorf("event types %v, want %v", counts, want)
	}
	if attestations == 0 || len(signingKeys) != 2 {
		t.Errorf("%d attested decisions and checkpoints signed by %d keys, want some and 2", attestations, len(signingKeys))
	}
}

// frozenKafkaLog is partition 0 of the events topic a gate built at commit
// 7d57834 wrote on Kafka (agentgate dev-kafka, two partitions, the
// workloads of the embedded fixture), frozen as the broker stored it.
const frozenKafkaLog = "testdata/kafka-7d57834"

// TestReplayVerifyReproducesTheKafkaLogOf7d57834 is the same promise on
// Kafka: the frozen messages (value, the seq and prev headers, key) are
// produced as they were to partition 0 of a test broker, today's Kafka log
// reads them back as a chain, and re-deciding each recorded command and
// checkpoint on the state before it reproduces the recorded bytes.
func TestReplayVerifyReproducesTheKafkaLogOf7d57834(t *testing.T) {
	ctx := context.Background()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, kafkaTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var msgs []kafka.Message
	eachLine(t, filepath.Join(frozenKafkaLog, "partition0.jsonl"), func(line []byte) {
		var m struct {
			Offset  int64             `json:"offset"`
			Key     string            `json:"key"`
			Headers map[string]string `json:"headers"`
			Value   []byte            `json:"value"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		if m.Offset != int64(len(msgs)) {
			t.Fatalf("frozen message at offset %d, want %d", m.Offset, len(msgs))
		}
		msg := kafka.Message{Value: m.Value}
		if m.Key != "" {
			msg.Key = []byte(m.Key)
		}
		for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
			msg.Headers = append(msg.Headers, kafka.Header{Key: k, Value: []byte(m.Headers[k])})
		}
		msgs = append(msgs, msg)
	})
	w := &kafka.Writer{
		Addr: kafka.TCP(c.ListenAddrs()...), Topic: kafkaTopic, RequiredAcks: kafka.RequireAll, BatchSize: len(msgs),
		Balancer: kafka.BalancerFunc(func(kafka.Message, ...int) int { return 0 }),
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("producing the frozen messages: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	log, err := kafkalog.Open(ctx, c.ListenAddrs(), kafkaTopic, 0, kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if h := log.Head(); h.Seq != uint64(len(msgs)) {
		t.Fatalf("the Kafka log's head is seq %d, want %d", h.Seq, len(msgs))
	}
	if err := streams.VerifyChain(ctx, log, 1); err != nil {
		t.Fatalf("the frozen partition does not chain: %v", err)
	}
	kr := openFrozenKeyring(t, frozenKafkaLog, t.TempDir())
	d := replay.NewRedecider(kr.SignerFor(frozenNodeID(t, frozenKafkaLog)))
	events, commands, checkpoints := 0, 0, 0
	err = log.Read(ctx, 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return fmt.Errorf("decoding record %d: %w", r.Seq, err)
		}
		events++
		if ev.Command != nil {
			commands++
		}
		if ev.Checkpoint != nil {
			checkpoints++
		}
		if m := d.Next(ev, r.Payload); m != "" {
			t.Errorf("re-deciding seq %d (%s): %s", ev.Seq, ev.Type, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if events != len(msgs) || commands != 116 || checkpoints != 8 {
		t.Errorf("read %d events, %d commands, %d checkpoints; want %d, 116, 8", events, commands, checkpoints, len(msgs))
	}
}

const kafkaTopic = "agentgate.events"

// frozenRecord is one line of log.jsonl: a record as the log stored it
// (the payload base64, as encoding/json writes a []byte).
type frozenRecord struct {
	Seq     uint64 `json:"seq"`
	Prev    string `json:"prev"`
	Payload []byte `json:"payload"`
}

func readFrozenLog(t *testing.T, path string) []streams.Record {
	t.Helper()
	var recs []streams.Record
	eachLine(t, path, func(line []byte) {
		var r frozenRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, streams.Record{Seq: r.Seq, Prev: r.Prev, Payload: r.Payload})
	})
	if len(recs) == 0 {
		t.Fatalf("%s holds no records", path)
	}
	return recs
}

// openFrozenStore writes the frozen key/value pairs of a projection store
// into a Pebble database in dir and opens it as a projection store.
func openFrozenStore(t *testing.T, path, dir string) *projections.Store {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	eachLine(t, path, func(line []byte) {
		var kv struct {
			K []byte `json:"k"`
			V []byte `json:"v"`
		}
		if err := json.Unmarshal(line, &kv); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := b.Set(kv.K, kv.V, nil); err != nil {
			t.Fatal(err)
		}
	})
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := projections.Open(dir, nil)
	if err != nil {
		t.Fatalf("opening the frozen projection store: %v", err)
	}
	return s
}

// openFrozenKeyring copies the signing keys frozen in fixture/keys into
// dir/keys (owner only, as the gate writes them) and opens the keyring
// there.
func openFrozenKeyring(t *testing.T, fixture, dir string) *attest.Keyring {
	t.Helper()
	src := filepath.Join(fixture, "keys")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "keys", e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kr.KIDs()); n != len(entries) {
		t.Fatalf("keyring holds %d keys, want the %d frozen ones", n, len(entries))
	}
	return kr
}

// frozenNodeID returns the node ID frozen in fixture.
func frozenNodeID(t *testing.T, fixture string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixture, "node_id"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func eachLine(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
}

// checkpointKID returns the kid in the protected header of a checkpoint's
// JWS signature.
func checkpointKID(t *testing.T, sig string) string {
	t.Helper()
	header, _, _ := strings.Cut(sig, ".")
	raw, err := base64.RawURLEncoding.DecodeString(header)
	var h struct {
		KID string `json:"kid"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &h)
	}
	if err != nil || h.KID == "" {
		t.Fatalf("checkpoint signature %q names no key: %v", sig, err)
	}
	return h.KID
}
