package diskspace

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// DefaultLogEvery is how often a LogLimiter lets one kind of message
// through by default.
const DefaultLogEvery = 10 * time.Second

// maxLimiterKeys bounds the kinds of message a LogLimiter tracks; past it,
// every new kind shares one slot.
const maxLimiterKeys = 256

// LogLimiter lets at most one message of each kind through per interval
// and counts the ones it held back, so that an error repeated in a loop
// (Pebble retrying a flush, every request refused on a full disk) costs a
// few lines a minute rather than megabytes. The zero value lets one message
// per DefaultLogEvery through; it is safe for concurrent use.
type LogLimiter struct {
	// Every is the interval (zero: DefaultLogEvery).
	Every time.Duration

	mu    sync.Mutex
	kinds map[string]*limited
	now   func() time.Time // nil: time.Now (tests set it)
}

type limited struct {
	last       time.Time
	suppressed int
}

// Allow reports whether a message of this kind may be logged now and how
// many of its kind were held back since the last one let through.
func (l *LogLimiter) Allow(kind string) (ok bool, suppressed int) {
	every := l.Every
	if every == 0 {
		every = DefaultLogEvery
	}
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kinds == nil {
		l.kinds = map[string]*limited{}
	}
	t := now()
	k := l.kinds[kind]
	if k == nil {
		if len(l.kinds) >= maxLimiterKeys {
			kind = "\x00other"
			k = l.kinds[kind]
		}
		if k == nil {
			k = &limited{}
			l.kinds[kind] = k
			k.last = t
			return true, 0
		}
	}
	if t.Sub(k.last) < every {
		k.suppressed++
		return false, 0
	}
	k.last, suppressed, k.suppressed = t, k.suppressed, 0
	return true, suppressed
}

// Log logs msg at level on logger unless a message of kind was logged
// within the interval; the line carries the number held back since the
// last one as "suppressed".
func (l *LogLimiter) Log(logger *slog.Logger, level slog.Level, kind, msg string, args ...any) {
	ok, n := l.Allow(kind)
	if !ok {
		return
	}
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	logger.Log(context.Background(), level, msg, args...)
}
