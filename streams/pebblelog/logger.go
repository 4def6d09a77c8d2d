package pebblelog

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleLogger routes Pebble's messages to slog: informational messages at
// Debug (Pebble reports routine work there), errors at Error. Fatalf logs
// at Error and panics, because Pebble requires that it not return; Pebble
// calls it only for corruption or a broken internal invariant.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic("pebble: " + msg)
}

// eventListener reports the Pebble events an operator must see: background
// errors, slow disks and write stalls (each one delays every Append).
func eventListener(l *slog.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			l.Error("pebble background error", "component", "pebble", "err", err)
		},
		DiskSlow: func(info pebble.DiskSlowInfo) {
			l.Warn("pebble disk slow", "component", "pebble", "info", info.String())
		},
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			l.Warn("pebble write stall", "component", "pebble", "reason", info.Reason)
		},
		WriteStallEnd: func() {
			l.Info("pebble write stall ended", "component", "pebble")
		},
	}
}
