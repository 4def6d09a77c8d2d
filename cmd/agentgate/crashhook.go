//go:build agentgate_crashhook

package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
)

// crashMarker, in the query of a verified action, makes a binary built
// with the tag agentgate_crashhook kill itself (SIGKILL) while processing
// that request: a request that really kills the gate, for the poison-pill
// tests of issue 11 (kafka_poison_test.go). Release builds never contain
// this file.
const crashMarker = "agentgate-crash-hook"

// slowMarker makes the same binary take slowHookDelay over the action (an
// engine that takes its time), so that it is still in flight when another
// partition's poison kills the process.
const (
	slowMarker    = "agentgate-slow-hook"
	slowHookDelay = 1500 * time.Millisecond
)

func init() {
	actionVerifier = func(v handlers.ActionVerifier) handlers.ActionVerifier { return crashingVerifier{v} }
}

// crashingVerifier kills the process on an action carrying crashMarker,
// waits on one carrying slowMarker, and defers to the engines.
type crashingVerifier struct{ next handlers.ActionVerifier }

func (c crashingVerifier) Verdict(ctx context.Context, act *domain.Action) *domain.EngineVerdict {
	if strings.Contains(act.Query, crashMarker) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is not handled: the process ends here
	}
	if strings.Contains(act.Query, slowMarker) {
		select {
		case <-time.After(slowHookDelay):
		case <-ctx.Done():
		}
	}
	return c.next.Verdict(ctx, act)
}
