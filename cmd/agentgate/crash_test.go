package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

type server struct {
	cmd  *exec.Cmd
	addr string
}

// startServer starts `agentgate serve` on data, on a free port of
// 127.0.0.1 it binds itself, with the admin key "admin-key" and waits
// until it is healthy.
func startServer(t *testing.T, bin, data string) *server {
	t.Helper()
	cmd, _, addr := cliServe(t, bin, []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	return &server{cmd: cmd, addr: addr}
}

func call(ctx context.Context, client *http.Client, method, url string, hdr map[string]string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("decoding response: %w", err)
	}
	return resp.StatusCode, out, nil
}

type ack struct {
	actionID string
	conv     string
	step     int
}

// TestCrashKill9 runs a load over HTTP against the real binary, kills it
// with SIGKILL mid-run and restarts it: every acknowledged decision must be
// in the log and the activity API, no step may be consumed twice, and a
// replay with --verify must find nothing wrong.
func TestCrashKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	srv := startServer(t, bin, data)
	base := "http://" + srv.addr
	client := &http.Client{Timeout: 10 * time.Second}
	ctx := context.Background()
	admin := map[string]string{"X-API-Key": "admin-key"}

	status, reg, err := call(ctx, client, "POST", base+"/agents/register", admin, map[string]any{
		"agent":       map[string]any{"name": "crash-bot", "type": "trusted", "principal_id": "org_crash"},
		"permissions": map[string]any{},
		"budget":      map[string]any{},
	})
	if err != nil || status != 201 {
		t.Fatalf("register: %d %v %v", status, reg, err)
	}
	agent, token := reg["agent_id"].(string), reg["agent_token"].(string)
	auth := func(key string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + token, "Idempotency-Key": key}
	}

	var (
		mu     sync.Mutex
		acked  []ack
		killed atomic.Bool
		wg     sync.WaitGroup
	)
	const workers = 16
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := 0; !killed.Load(); c++ {
				conv := fmt.Sprintf("w%d-c%d", w, c)
				for step := 1; step <= 50 && !killed.Load(); step++ {
					status, out, err := call(ctx, client, "POST", base+"/agents/"+agent+"/verify", auth(conv+"/"+fmt.Sprint(step)), map[string]any{
						"action":  map[string]any{"type": "calculate", "query": fmt.Sprintf("%s+%d", conv, step)},
						"context": map[string]any{"conversation_id": conv, "step_number": step},
					})
					if err != nil {
						return // the server died under us: unacknowledged
					}
					if status != 200 || out["decision"] != "APPROVED" {
						t.Errorf("verify %s/%d: %d %v", conv, step, status, out)
						return
					}
					mu.Lock()
					acked = append(acked, ack{out["action_id"].(string), conv, step})
					mu.Unlock()
				}
			}
		}()
	}
	// Kill once a good number of decisions are acknowledged.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 1500 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.Store(true)
	srv.cmd.Wait()
	wg.Wait()
	t.Logf("acknowledged %d decisions before SIGKILL", len(acked))

	srv = startServer(t, bin, data)
	base = "http://" + srv.addr
	seen := map[string]bool{}
	steps := map[string]map[float64]int{}
	from := time.Now().UTC().Add(-24 * time.Hour).Format("2006-01-02")
	to := time.Now().UTC().Add(48 * time.Hour).Format("2006-01-02")
	for after := 0.0; ; {
		status, page, err := call(ctx, client, "GET",
			fmt.Sprintf("%s/agents/%s/activity?from=%s&to=%s&limit=1000&after_seq=%d", base, agent, from, to, int64(after)), admin, nil)
		if err != nil || status != 200 {
			t.Fatalf("activity: %d %v %v", status, page, err)
		}
		for _, a := range page["activities"].([]any) {
			m := a.(map[string]any)
			seen[m["activity_id"].(string)] = true
			if m["decision"] == "APPROVED" {
				conv := m["conversation_id"].(string)
				if steps[conv] == nil {
					steps[conv] = map[float64]int{}
				}
				steps[conv][m["step_number"].(float64)]++
			}
		}
		next, _ := page["next_after_seq"].(float64)
		if next == 0 {
			break
		}
		after = next
	}
	for _, a := range acked {
		if !seen[a.actionID] {
			t.Errorf("acknowledged decision %s (%s step %d) is missing after the restart", a.actionID, a.conv, a.step)
		}
	}
	for conv, m := range steps {
		for step, n := range m {
			if n > 1 {
				t.Errorf("conversation %s step %v consumed %d times", conv, step, n)
			}
		}
	}
	// Acknowledged steps stay consumed: a new request for one is a replay.
	last := acked[len(acked)-1]
	status, out, err := call(ctx, client, "POST", base+"/agents/"+agent+"/verify", auth("after-restart"), map[string]any{
		"action":  map[string]any{"type": "calculate", "query": "other"},
		"context": map[string]any{"conversation_id": last.conv, "step_number": last.step},
	})
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := out["error"].(map[string]any); e == nil || e["code"] != "QWED-AGENT-LOOP-002" {
		t.Fatalf("re-used acknowledged step after restart: %d %v, want LOOP-002", status, out)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("SIGTERM exit: %v", err)
	}
	replay := exec.Command(bin, "replay", "--data", data, "--verify")
	outb, err := replay.CombinedOutput()
	if err != nil {
		t.Fatalf("replay --verify after the crash: %v\n%s", err, outb)
	}
	t.Logf("%s", outb)
}
