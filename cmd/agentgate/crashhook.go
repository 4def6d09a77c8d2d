//go:build agentgate_crashhook

package main

import (
	"context"
	"os"
	"strings"
	"syscall"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
)

// crashMarker, in the query of a verified action, makes a binary built
// with the tag agentgate_crashhook kill itself (SIGKILL) while processing
// that request: a request that really kills the gate, for the poison-pill
// tests of issue 11 (kafka_poison_test.go). Release builds never contain
// this file.
const crashMarker = "agentgate-crash-hook"

func init() {
	actionVerifier = func(v handlers.ActionVerifier) handlers.ActionVerifier { return crashingVerifier{v} }
}

// crashingVerifier kills the process on an action carrying crashMarker and
// otherwise defers to the engines.
type crashingVerifier struct{ next handlers.ActionVerifier }

func (c crashingVerifier) Verdict(ctx context.Context, act *domain.Action) *domain.EngineVerdict {
	if strings.Contains(act.Query, crashMarker) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is not handled: the process ends here
	}
	return c.next.Verdict(ctx, act)
}
