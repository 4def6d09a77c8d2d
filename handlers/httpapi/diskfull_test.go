package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// syncBuffer collects log lines from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestFullDisk pins issue 11 item 6 on the embedded gate, with ENOSPC
// injected under the log and the projections: while the disk is full,
// writes are answered 503 QWED-SYS-003 (no reset, no panic, a few log
// lines), reads 200; once space returns, writes succeed without a restart;
// a gate started on a full disk listens and does the same; and at the end
// every acknowledged decision is in the activity and the log replays and
// re-decides identically.
func TestFullDisk(t *testing.T) {
	fs := diskspace.NewFullFS(nil)
	dir := t.TempDir()
	var logs syncBuffer
	opts := gateOptions{dataDir: dir, fs: fs, logOut: &logs}
	g := newTestGate(t, opts)
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 2, nil)
	var acked []string
	step := 0
	verify := func(idem string) response {
		t.Helper()
		h := bearerH(a.token)
		h["Idempotency-Key"] = idem
		return g.do("POST", "/agents/"+a.id+"/verify", h, verifyReq("calculate", fmt.Sprint("1+", step), "conv", step))
	}
	approved := func(idem string) {
		t.Helper()
		r := verify(idem)
		if r.status != 200 {
			t.Fatalf("verify %s: %d %s", idem, r.status, r.body)
		}
		acked = append(acked, r.json(t)["action_id"].(string))
	}
	refused := func(idem string) {
		t.Helper()
		for range 50 {
			if r := verify(idem); r.status != 503 || r.errorCode(t) != string(domain.CodeStorageFull) {
				t.Fatalf("verify %s on a full disk: %d %s, want 503 %s", idem, r.status, r.body, domain.CodeStorageFull)
			}
		}
		for _, path := range []string{"/agents/" + a.id, "/agents/" + a.id + "/activity?from=2026-03-01&to=2026-03-03"} {
			if r := g.do("GET", path, apiKey(key), nil); r.status != 200 {
				t.Fatalf("GET %s on a full disk: %d %s", path, r.status, r.body)
			}
		}
	}
	step = 1
	approved("s1")

	// The disk fills: refused before anything is written.
	fs.Fill()
	before := strings.Count(logs.String(), "\n")
	step = 2
	refused("s2")
	if n := strings.Count(logs.String(), "\n") - before; n > 4 {
		t.Errorf("50 refused requests logged %d lines, want at most 4:\n%s", n, logs.String())
	}
	if fs.Failed() != 0 {
		t.Errorf("%d writes reached the full disk", fs.Failed())
	}
	fs.Free()
	approved("s2")

	// Another process takes the space between the check and the write:
	// the log's commit fails with ENOSPC, the gate answers 503, not a
	// reset, and reopens the log once space returns.
	fs.FailWrites()
	step = 3
	if r := verify("s3"); r.status != 503 || r.errorCode(t) != string(domain.CodeStorageFull) {
		t.Fatalf("verify hitting ENOSPC: %d %s, want 503 %s", r.status, r.body, domain.CodeStorageFull)
	}
	fs.Free()
	approved("s3")

	// A restart on a full disk listens, reads, refuses writes, and takes
	// them once space returns.
	g.stop()
	fs.Fill()
	g = newTestGate(t, opts)
	step = 4
	refused("s4")
	fs.Free()
	approved("s4")

	r := g.do("GET", "/agents/"+a.id+"/activity?from=2026-03-01&to=2026-03-03", apiKey(key), nil)
	body := string(r.body)
	for _, id := range acked {
		if !strings.Contains(body, id) {
			t.Errorf("acknowledged decision %s is missing from the activity", id)
		}
	}
	if err := streams.VerifyChain(context.Background(), g.gate.Log, 1); err != nil {
		t.Fatalf("verifying the chain: %v", err)
	}
	rep, err := replay.Replay(context.Background(), g.gate.Log, g.gate.Store, true, g.gate.Keyring.SignerFor(g.gate.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay --verify: %v %+v", err, rep)
	}
	if steps := strings.Count(body, `"step_number":`); steps != len(acked) {
		t.Errorf("activity holds %d steps, want the %d acknowledged (no step decided twice)", steps, len(acked))
	}
}
