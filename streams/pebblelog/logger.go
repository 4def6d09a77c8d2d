package pebblelog

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/streams/diskspace"
)

// pebbleLogger routes Pebble's messages to slog: informational messages at
// Debug (Pebble reports routine work there), errors at Error, at most one
// line per format and interval (Pebble retries a failed flush at once,
// forever: on a full disk that is a loop). Fatalf logs at Error and panics
// with a diskspace.Fatal, because Pebble requires that it not return; Pebble
// calls it for corruption, a broken internal invariant, or a WAL or
// MANIFEST write that failed. Append recovers from the one that a full disk
// causes in its own goroutine (Log.commit).
type pebbleLogger struct {
	l     *slog.Logger
	quiet *diskspace.LogLimiter
}

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.quiet.Log(p.l, slog.LevelError, format, fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic(diskspace.Fatal(msg))
}

// eventListener reports the Pebble events an operator must see: background
// errors, slow disks and write stalls (each one delays every Append), each
// kind at most once per interval.
func eventListener(l *slog.Logger, quiet *diskspace.LogLimiter) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			quiet.Log(l, slog.LevelError, "background error", "pebble background error", "component", "pebble", "err", err.Error())
		},
		DiskSlow: func(info pebble.DiskSlowInfo) {
			quiet.Log(l, slog.LevelWarn, "disk slow", "pebble disk slow", "component", "pebble", "info", info.String())
		},
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			quiet.Log(l, slog.LevelWarn, "write stall", "pebble write stall", "component", "pebble", "reason", info.Reason)
		},
		WriteStallEnd: func() {
			quiet.Log(l, slog.LevelInfo, "write stall ended", "pebble write stall ended", "component", "pebble")
		},
	}
}
