package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
)

// runAuditCLI runs `agentgate audit verify args…` and returns its exit code
// and standard output.
func runAuditCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), append([]string{"audit", "verify"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running agentgate: %v", err)
	}
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return code, out.String()
}

// auditSeedPolicy makes a checkpoint every 10 events in the seeded logs.
var auditSeedPolicy = domain.CheckpointPolicy{Events: 10, Interval: domain.Duration(time.Hour)}

// seedAuditData runs an embedded gate on dir: one agent, n attested
// decisions (one request per batch), so a checkpoint every 10 events.
func seedAuditData(t *testing.T, dir string, n int) {
	t.Helper()
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock, Checkpoint: auditSeedPolicy,
		Logger: auditLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Worker.Run(ctx) }()
	tl := domain.TrustLevel(2)
	reg, err := g.Worker.Submit(ctx, &domain.Command{
		Type: domain.CmdRegisterAgent, Principal: domain.AdminPrincipal, Request: domain.RequestID{Source: "t", ID: "reg"},
		Register: &domain.RegisterAgent{Agent: domain.AgentInfo{Name: "auditee", Type: "autonomous", PrincipalID: "org_1"},
			TrustLevel: &tl, TokenHash: command.HashSecret("tok")},
	})
	if err != nil || reg.Registered == nil {
		t.Fatalf("registering: %v %+v", err, reg)
	}
	for i := 1; i <= n; i++ {
		ev, err := g.Worker.Submit(ctx, &domain.Command{
			Type: domain.CmdVerifyAction, AgentID: reg.Registered.AgentID, TokenHash: command.HashSecret("tok"),
			Request: domain.RequestID{Source: "t", ID: "v" + strconv.Itoa(i)},
			Verify: &domain.VerifyAction{
				Action:  domain.Action{Type: "calculate", Query: fmt.Sprintf("%d+%d", i, i)},
				Context: domain.ActionContext{ConversationID: "c1", StepNumber: json.Number(strconv.Itoa(i))},
				Options: domain.Options{RequireAttestation: true},
			},
		})
		if err != nil || ev.Decided == nil || ev.Decided.Attestation == "" {
			t.Fatalf("deciding %d: %v %+v", i, err, ev)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

// The stored layout of streams/pebblelog: key 'r' + big-endian seq, value
// = flag, prev hash, hash (65 bytes) + payload.
const pebbleHeaderLen = 65

func pebbleKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'r'}, seq)
}

// tamper opens the log's Pebble files directly, as an attacker with disk
// access would, and runs fn on them.
func tamper(t *testing.T, dir string, fn func(db *pebble.DB)) {
	t.Helper()
	db, err := pebble.Open(filepath.Join(dir, "log"), &pebble.Options{Logger: quietPebble{t}})
	if err != nil {
		t.Fatal(err)
	}
	fn(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// quietPebble sends Pebble's messages to the test log.
type quietPebble struct{ t *testing.T }

func (q quietPebble) Infof(string, ...any)              {}
func (q quietPebble) Errorf(format string, args ...any) { q.t.Logf(format, args...) }
func (q quietPebble) Fatalf(format string, args ...any) { q.t.Fatalf(format, args...) }

func getRecord(t *testing.T, db *pebble.DB, seq uint64) []byte {
	t.Helper()
	v, closer, err := db.Get(pebbleKey(seq))
	if err != nil {
		t.Fatalf("reading seq %d: %v", seq, err)
	}
	defer closer.Close()
	return bytes.Clone(v)
}

// copyDir copies a seeded data dir, so each case tampers with its own.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestAuditVerifyEmbedded pins issue 5 through the CLI on real Pebble
// files: intact → exit 0; one edited byte, one dropped event, a cut tail
// (against the projections' head, and against the checkpoint cadence
// alone), a rewritten chain → exit 1 with the position of the first
// broken link.
func TestAuditVerifyEmbedded(t *testing.T) {
	seed := t.TempDir()
	seedAuditData(t, seed, 45) // registration, 45 decisions, 4 checkpoints, the stop's: seq 1..51
	wantLine := func(t *testing.T, out, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}

	t.Run("intact", func(t *testing.T) {
		code, out := runAuditCLI(t, "--data", copyDir(t, seed))
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		wantLine(t, out, "partition 0: seq 1..51 (51 events), 5 checkpoints (last at seq 51, 0 events after it), 45 attestations verified")
		wantLine(t, out, "INTACT")
	})

	t.Run("one byte edited", func(t *testing.T) {
		dir := copyDir(t, seed)
		tamper(t, dir, func(db *pebble.DB) {
			v := getRecord(t, db, 17)
			i := bytes.Index(v[pebbleHeaderLen:], []byte(`"query":"`))
			if i < 0 {
				t.Fatal("no query in seq 17")
			}
			v[pebbleHeaderLen+i+len(`"query":"`)] = '9' // "15+15" -> "95+15": the JSON stays valid
			if err := db.Set(pebbleKey(17), v, pebble.Sync); err != nil {
				t.Fatal(err)
			}
		})
		code, out := runAuditCLI(t, "--data", dir)
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		wantLine(t, out, "BROKEN: partition 0 seq 18: prev: prev is not the SHA-256 of seq 17 as stored")
	})

	t.Run("one event dropped", func(t *testing.T) {
		dir := copyDir(t, seed)
		tamper(t, dir, func(db *pebble.DB) {
			if err := db.Delete(pebbleKey(23), pebble.Sync); err != nil {
				t.Fatal(err)
			}
		})
		code, out := runAuditCLI(t, "--data", dir)
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		wantLine(t, out, "BROKEN: partition 0 seq 23: gap: 1 event(s) missing before seq 24")
	})

	t.Run("tail cut, projections head", func(t *testing.T) {
		dir := copyDir(t, seed)
		tamper(t, dir, func(db *pebble.DB) {
			if err := db.DeleteRange(pebbleKey(48), pebbleKey(52), pebble.Sync); err != nil {
				t.Fatal(err)
			}
		})
		code, out := runAuditCLI(t, "--data", dir)
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		wantLine(t, out, "BROKEN: partition 0 seq 48: truncated: the log ends 4 event(s) before the head recorded in the projections (state/)")
	})

	t.Run("tail cut at a due checkpoint, no projections", func(t *testing.T) {
		dir := copyDir(t, seed)
		if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
			t.Fatal(err)
		}
		tamper(t, dir, func(db *pebble.DB) {
			// Seq 44 is the checkpoint the decision at 43 made due.
			if err := db.DeleteRange(pebbleKey(44), pebbleKey(52), pebble.Sync); err != nil {
				t.Fatal(err)
			}
		})
		code, out := runAuditCLI(t, "--data", dir)
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		wantLine(t, out, "BROKEN: partition 0 seq 44: truncated: the log ends before the checkpoint due after seq 43")
	})

	t.Run("tail cut inside the uncovered window is not detectable", func(t *testing.T) {
		dir := copyDir(t, seed)
		if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
			t.Fatal(err)
		}
		tamper(t, dir, func(db *pebble.DB) {
			// 47..50 and the stop's checkpoint at 51.
			if err := db.DeleteRange(pebbleKey(47), pebbleKey(52), pebble.Sync); err != nil {
				t.Fatal(err)
			}
		})
		code, out := runAuditCLI(t, "--data", dir)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		wantLine(t, out, "(last at seq 44, 2 events after it)")
	})

	t.Run("chain rewritten after an edit", func(t *testing.T) {
		dir := copyDir(t, seed)
		tamper(t, dir, func(db *pebble.DB) { rewriteChain(t, db, 12, 51) })
		code, out := runAuditCLI(t, "--data", dir)
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		// Seq 22 is the first checkpoint over the rewritten events: its
		// head was rewritten too, but its signature signs the original.
		wantLine(t, out, "BROKEN: partition 0 seq 22: signature: the signature is valid but signs another checkpoint")
	})

	t.Run("gate running", func(t *testing.T) {
		dir := copyDir(t, seed)
		g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "admin", Logger: auditLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		code, out := runAuditCLI(t, "--data", dir)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		wantLine(t, out, "partition 0: seq 1..51 (51 events)")
	})

	t.Run("no signatures", func(t *testing.T) {
		code, out := runAuditCLI(t, "--data", copyDir(t, seed), "--no-signatures")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		wantLine(t, out, "0 attestations verified")
	})
}

// rewriteChain edits the query of seq from and re-chains every record up
// to last (prev, stored hashes, checkpoint heads): what an attacker
// without the signing key can do.
func rewriteChain(t *testing.T, db *pebble.DB, from, last uint64) {
	t.Helper()
	prevRec := getRecord(t, db, from-1)
	prev := streams.HashPayload(prevRec[pebbleHeaderLen:])
	for seq := from; seq <= last; seq++ {
		v := getRecord(t, db, seq)
		ev, err := eventjson.DecodeEvent(v[pebbleHeaderLen:])
		if err != nil {
			t.Fatal(err)
		}
		if seq == from {
			ev.Command.Verify.Action.Query = "1000000+1"
		}
		ev.Prev = prev
		if ev.Checkpoint != nil {
			ev.Checkpoint.Head = prev
		}
		payload, err := handlers.EncodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		val := make([]byte, pebbleHeaderLen, pebbleHeaderLen+len(payload))
		val[0] = 1
		p, _ := hexBytes(prev)
		copy(val[1:33], p)
		h, _ := hexBytes(streams.HashPayload(payload))
		copy(val[33:65], h)
		val = append(val, payload...)
		if err := db.Set(pebbleKey(seq), val, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		prev = streams.HashPayload(payload)
	}
}

func hexBytes(s string) ([]byte, error) {
	out := make([]byte, len(s)/2)
	for i := range out {
		n, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, err
		}
		out[i] = byte(n)
	}
	return out, nil
}

// TestAuditVerifyKafka pins `audit verify --kafka-brokers` on a kfake
// events topic of two partitions holding a seeded chain: intact (with a
// superseded duplicate a retried produce leaves) → exit 0; one byte
// edited, one event dropped, or the tail cut before a due checkpoint →
// exit 1 with the partition, seq and offset.
func TestAuditVerifyKafka(t *testing.T) {
	seed := t.TempDir()
	seedAuditData(t, seed, 25) // seq 1..28: checkpoints at 11 and 22
	var payloads [][]byte
	tamper(t, seed, func(db *pebble.DB) {
		for seq := uint64(1); seq <= 28; seq++ {
			payloads = append(payloads, getRecord(t, db, seq)[pebbleHeaderLen:])
		}
	})
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	code, out := runAuditCLI(t, "--data", seed, "--json")
	if code != 0 {
		t.Fatalf("seed broken: %s", out)
	}
	writeJWKS(t, seed, jwks)

	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	topicN := 0
	// publish creates a two-partition topic and produces the seeded chain,
	// as mutate leaves it, to partition 0 with the gate's headers
	// (partition 1 stays empty, as a partition no request reached).
	publish := func(t *testing.T, mutate func(msgs []kafka.Message) []kafka.Message) string {
		t.Helper()
		topicN++
		topic := fmt.Sprintf("events-%d", topicN)
		conn, err := kafka.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}); err != nil {
			t.Fatal(err)
		}
		var msgs []kafka.Message
		prev := ""
		for i, p := range payloads {
			msgs = append(msgs, kafka.Message{Value: p, Headers: []kafka.Header{
				{Key: kafkalog.HeaderSeq, Value: []byte(strconv.Itoa(i + 1))}, {Key: kafkalog.HeaderPrev, Value: []byte(prev)}}})
			prev = streams.HashPayload(p)
		}
		tr := &kafka.Transport{} // a fresh metadata cache: the topic is new
		defer tr.CloseIdleConnections()
		cl := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 10 * time.Second, Transport: tr}
		produce := func(part int, ms []kafka.Message) {
			recs := make([]kafka.Record, len(ms))
			for i, m := range ms {
				recs[i] = kafka.Record{Value: kafka.NewBytes(m.Value), Headers: m.Headers}
			}
			resp, err := cl.Produce(context.Background(), &kafka.ProduceRequest{Topic: topic, Partition: part,
				RequiredAcks: kafka.RequireAll, Records: kafka.NewRecordReader(recs...)})
			if err != nil || resp.Error != nil {
				t.Fatalf("producing: %v %v", err, resp)
			}
		}
		produce(0, mutate(slices.Clone(msgs)))
		// Partition 1 is empty: the gate never wrote to it.
		return topic
	}

	t.Run("intact with a superseded duplicate", func(t *testing.T) {
		topic := publish(t, func(m []kafka.Message) []kafka.Message {
			// A retried produce of seq 5..6 lands after seq 7.
			out := append([]kafka.Message{}, m[:7]...)
			out = append(out, m[4], m[5])
			return append(out, m[7:]...)
		})
		code, out := runAuditCLI(t, "--kafka-brokers", addr, "--topic", topic, "--jwks", jwks)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if !strings.Contains(out, "partition 0: seq 1..28 (28 events), 2 checkpoints") || !strings.Contains(out, "2 superseded records skipped") ||
			!strings.Contains(out, "INTACT") {
			t.Fatalf("output:\n%s", out)
		}
	})

	t.Run("one byte edited", func(t *testing.T) {
		topic := publish(t, func(m []kafka.Message) []kafka.Message {
			v := bytes.Clone(m[9].Value)
			i := bytes.Index(v, []byte(`"query":"`))
			v[i+len(`"query":"`)] = '7'
			m[9].Value = v
			return m
		})
		code, out := runAuditCLI(t, "--kafka-brokers", addr, "--topic", topic, "--jwks", jwks)
		if code != 1 || !strings.Contains(out, "BROKEN: partition 0 seq 11 (offset 10): prev:") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("one event dropped", func(t *testing.T) {
		topic := publish(t, func(m []kafka.Message) []kafka.Message { return append(m[:14:14], m[15:]...) })
		code, out := runAuditCLI(t, "--kafka-brokers", addr, "--topic", topic, "--jwks", jwks)
		if code != 1 || !strings.Contains(out, "BROKEN: partition 0 seq 15 (offset 14): gap:") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("tail cut before a due checkpoint", func(t *testing.T) {
		topic := publish(t, func(m []kafka.Message) []kafka.Message { return m[:21] })
		code, out := runAuditCLI(t, "--kafka-brokers", addr, "--topic", topic, "--jwks", jwks)
		if code != 1 || !strings.Contains(out, "BROKEN: partition 0 seq 22: truncated:") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
}

// writeJWKS writes the seeded data dir's JWKS to path (what GET
// /.well-known/jwks.json serves).
func writeJWKS(t *testing.T, dataDir, path string) {
	t.Helper()
	kr, err := attest.OpenKeyring(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, kr.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Issue 17 item 13: counts of one read in the singular ("1 checkpoint",
// "1 attestation"; they read "1 checkpoints", "1 attestations").
func TestAuditVerifySingularCounts(t *testing.T) {
	seed := t.TempDir()
	seedAuditData(t, seed, 1) // registration, 1 decision, the stop's checkpoint: seq 1..3
	code, out := runAuditCLI(t, "--data", seed)
	want := "partition 0: seq 1..3 (3 events), 1 checkpoint (last at seq 3, 0 events after it), 1 attestation verified"
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("exit %d, want %q:\n%s", code, want, out)
	}
}
