package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// fillDisk writes a file in dir until the disk is full (a real ENOSPC),
// then gives leave bytes back.
func fillDisk(t *testing.T, dir, name string, leave int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	for n := 4096; n > 0; n /= 2 { // the last partial blocks
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	if leave > 0 {
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(st.Size() - leave); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestServeOnFullTmpfs runs the binary with its data on a real 64 MiB
// tmpfs (issue 11 item 6): filled to the last byte, the gate answers
// writes 503 QWED-SYS-003 and reads 200, and takes writes again when the
// file filling it is removed; stopped on a full disk it exits cleanly, and
// restarted on one it listens (rather than spinning in Pebble's flush
// retries) and behaves the same; replay --verify then passes. It needs to
// mount a tmpfs (root); TestFullDisk in handlers/httpapi covers the same
// ground with injected ENOSPC and always runs.
func TestServeOnFullTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): TestFullDisk in handlers/httpapi covers this with injected ENOSPC", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v %s", mnt, err, out)
		}
	})
	bin := buildBinary(t)
	data := filepath.Join(mnt, "data")
	args := []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key", "--min-free-bytes", fmt.Sprint(4 << 20)}
	cmd, _, addr := cliServe(t, bin, args, nil)
	base := "http://" + addr
	client := &http.Client{Timeout: 10 * time.Second}
	ctx := context.Background()
	admin := map[string]string{"X-API-Key": "admin-key"}
	status, reg, err := call(ctx, client, "POST", base+"/agents/register", admin, map[string]any{
		"agent": map[string]any{"name": "disk-bot", "type": "trusted", "principal_id": "org_disk"}, "permissions": map[string]any{}, "budget": map[string]any{},
	})
	if err != nil || status != 201 {
		t.Fatalf("register: %d %v %v", status, reg, err)
	}
	agent, token := reg["agent_id"].(string), reg["agent_token"].(string)
	verify := func(step int) (int, map[string]any) {
		t.Helper()
		status, out, err := call(ctx, client, "POST", base+"/agents/"+agent+"/verify",
			map[string]string{"Authorization": "Bearer " + token, "Idempotency-Key": fmt.Sprint("step-", step)},
			map[string]any{"action": map[string]any{"type": "calculate", "query": fmt.Sprint("2+", step)},
				"context": map[string]any{"conversation_id": "c", "step_number": step}})
		if err != nil {
			t.Fatalf("verify step %d: %v (a reset: the gate died?)", step, err)
		}
		return status, out
	}
	approved := func(step int) {
		t.Helper()
		if status, out := verify(step); status != 200 || out["decision"] != "APPROVED" {
			t.Fatalf("verify step %d: %d %v", step, status, out)
		}
	}
	refused := func(step int) {
		t.Helper()
		for range 20 {
			status, out := verify(step)
			e, _ := out["error"].(map[string]any)
			if status != 503 || e == nil || e["code"] != "QWED-SYS-003" {
				t.Fatalf("verify step %d on a full disk: %d %v, want 503 QWED-SYS-003", step, status, out)
			}
		}
		if status, out, err := call(ctx, client, "GET", base+"/agents/"+agent, admin, nil); err != nil || status != 200 {
			t.Fatalf("read on a full disk: %d %v %v", status, out, err)
		}
	}
	approved(1)
	filler := fillDisk(t, mnt, "filler", 0)
	refused(2)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	approved(2)

	// Below the reserve the gate refuses writes and stops cleanly (the
	// projections' last flush uses the reserve); then the disk fills to
	// the last byte, and the gate restarts on it.
	filler = fillDisk(t, mnt, "filler", 2<<20)
	refused(3)
	cliStop(t, cmd)
	rest := fillDisk(t, mnt, "rest", 0)
	cmd, out, addr := cliServe(t, bin, args, nil)
	base = "http://" + addr
	refused(3)
	// Idle on a full disk, the gate writes a few lines, not a loop.
	n := len(out.String())
	time.Sleep(2 * time.Second)
	if grew := len(out.String()) - n; grew > 2048 {
		t.Errorf("idle on a full disk, the gate logged %d bytes in 2 s:\n%s", grew, out.String())
	}
	for _, p := range []string{filler, rest} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	approved(3)
	cliStop(t, cmd)
	if out, code := cliRun(t, bin, "replay", "--data", data, "--verify"); code != 0 {
		t.Fatalf("replay --verify after the full disk: exit %d\n%s", code, out)
	}
}
