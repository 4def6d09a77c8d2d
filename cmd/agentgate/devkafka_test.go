package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func kafkaTestLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Issue 3 "agentgate dev-kafka --listen 127.0.0.1:9092 --data DIR":
// the broker listens on exactly the --listen address, and what was
// produced to it (topics, records, committed group offsets) is there
// again after a restart on the same --data.
func TestDevKafkaListenAndPersistAcrossRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker")
	// Port 0 picks a free port; the restart below asks for exactly the
	// address the first start got.
	c, err := startDevKafka("127.0.0.1:0", dir, 3, false, kafkaTestLog())
	if err != nil {
		t.Fatal(err)
	}
	bound := c.ListenAddrs()
	if len(bound) != 1 || !strings.HasPrefix(bound[0], "127.0.0.1:") || strings.HasSuffix(bound[0], ":0") {
		c.Close()
		t.Fatalf("dev-kafka --listen 127.0.0.1:0 listens on %v, want one free port of 127.0.0.1", bound)
	}
	addr := bound[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "persist.test", RequiredAcks: kafka.RequireAll,
		AllowAutoTopicCreation: true, BatchTimeout: time.Millisecond}
	msgs := []kafka.Message{{Key: []byte("a"), Value: []byte("one")}, {Key: []byte("b"), Value: []byte("two")}, {Key: []byte("c"), Value: []byte("three")}}
	for {
		err := w.WriteMessages(ctx, msgs...)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("producing to dev-kafka: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // the auto-created topic's leader
	}
	_ = w.Close()
	// A consumer group reads one record and commits it.
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, GroupID: "persist-group", Topic: "persist.test",
		MaxWait: 100 * time.Millisecond, StartOffset: kafka.FirstOffset, CommitInterval: 0})
	first, err := r.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	c.Close()

	c, err = startDevKafka(addr, dir, 3, false, kafkaTestLog())
	if err != nil {
		t.Fatalf("restarting on the same data dir: %v", err)
	}
	defer c.Close()
	if got := c.ListenAddrs(); len(got) != 1 || got[0] != addr {
		t.Fatalf("dev-kafka listens on %v, want exactly %s", got, addr)
	}
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := conn.ReadPartitions("persist.test")
	conn.Close()
	if err != nil || len(ps) != 3 {
		t.Fatalf("topic after restart: %d partitions, %v; want the 3 it was created with", len(ps), err)
	}
	got := map[string]string{}
	for _, p := range ps {
		pr := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: "persist.test", Partition: p.ID, MaxWait: 100 * time.Millisecond})
		lc, err := kafka.DialLeader(ctx, "tcp", addr, "persist.test", p.ID)
		if err != nil {
			t.Fatal(err)
		}
		end, err := lc.ReadLastOffset()
		lc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < end; off++ {
			m, err := pr.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got[string(m.Key)] = string(m.Value)
		}
		_ = pr.Close()
	}
	if len(got) != 3 || got["a"] != "one" || got["b"] != "two" || got["c"] != "three" {
		t.Fatalf("records after restart: %v", got)
	}
	// The group resumes after the committed record: it never sees it again.
	r = kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, GroupID: "persist-group", Topic: "persist.test",
		MaxWait: 100 * time.Millisecond, StartOffset: kafka.FirstOffset})
	defer r.Close()
	seen := map[string]bool{}
	for len(seen) < 2 {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("group after restart: %v (saw %v)", err, seen)
		}
		if string(m.Key) == string(first.Key) {
			t.Fatalf("the group's committed record %s came again after the restart", first.Key)
		}
		seen[string(m.Key)] = true
	}
}

// devKafkaProcess runs `agentgate dev-kafka --listen 127.0.0.1:0` from
// bin (the broker binds a free port itself) and returns the address it
// prints once it listens.
func devKafkaProcess(t *testing.T, bin, data string) string {
	t.Helper()
	cmd := exec.Command(bin, "dev-kafka", "--listen", "127.0.0.1:0", "--data", data, "--partitions", "4")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		if m := listeningLine.FindStringSubmatch(l); m != nil && strings.HasPrefix(l, "dev-kafka ") {
			return m[1]
		}
		t.Fatalf("dev-kafka printed %q, want the address it listens on", l)
	case <-time.After(20 * time.Second):
		t.Fatal("dev-kafka did not start in 20 s")
	}
	return ""
}
