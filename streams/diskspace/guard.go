package diskspace

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/agentgate/agentgate/streams"
)

// ReserveFor returns the default reserve of a Pebble database whose
// memtables grow to memTableBytes: room for a new write-ahead log (Pebble
// preallocates about 1.1 memtables) and for flushing a full memtable into
// an sstable, plus 8 MiB for the MANIFEST and small files.
func ReserveFor(memTableBytes uint64) int64 {
	return int64(2*memTableBytes) + 8<<20
}

// Guard checks the free space of the disk holding one directory.
type Guard struct {
	fs      vfs.FS
	dir     string
	reserve int64
}

// NewGuard returns a guard of dir on fs (nil: the operating system's file
// system) that keeps reserve bytes free; a negative reserve disables it.
func NewGuard(fs vfs.FS, dir string, reserve int64) *Guard {
	if fs == nil {
		fs = vfs.Default
	}
	return &Guard{fs: fs, dir: dir, reserve: reserve}
}

// Check returns nil when the disk holding the directory has the reserve
// plus need bytes free, and an error wrapping streams.ErrNoSpace when it
// has not. A file system that cannot tell its free space passes: the guard
// never refuses a write for lack of information. It costs one statfs.
func (g *Guard) Check(need int) error {
	if g == nil || g.reserve < 0 {
		return nil
	}
	du, err := g.fs.GetDiskUsage(g.dir)
	if err != nil {
		return nil
	}
	want := uint64(g.reserve) + uint64(max(need, 0))
	if du.AvailBytes < want {
		return fmt.Errorf("%d bytes free on the disk of %s, %d needed with the reserve: %w", du.AvailBytes, g.dir, want, streams.ErrNoSpace)
	}
	return nil
}

// IsNoSpace reports whether err, or a message of Pebble's that carries an
// error only as text (Logger.Fatalf), says the disk is full.
func IsNoSpace(err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, streams.ErrNoSpace) || errors.Is(err, syscall.ENOSPC) ||
		strings.Contains(err.Error(), syscall.ENOSPC.Error())
}

// Fatal is the value the Pebble loggers of the log and the projections
// panic with in Fatalf (Pebble requires that Fatalf not return).
type Fatal string

func (f Fatal) Error() string { return string(f) }

// NoSpaceFatal returns the value recovered from a panic as an error when
// it is a Fatal caused by a full disk (the one fatal error of Pebble's a
// store survives: the write was refused, nothing acknowledged); for any
// other value ok is false and the caller must panic again with it.
func NoSpaceFatal(r any) (err error, ok bool) {
	f, isFatal := r.(Fatal)
	if !isFatal || !IsNoSpace(f) {
		return nil, false
	}
	return f, true
}

// Open is pebble.Open, except that a fatal error of Pebble's caused by a
// full disk during the open (a MANIFEST write: Logger.Fatalf, which must
// panic with a Fatal) is returned, wrapping streams.ErrNoSpace, rather
// than raised.
func Open(dir string, opts *pebble.Options) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := NoSpaceFatal(r)
			if !ok {
				panic(r)
			}
			db, err = nil, fmt.Errorf("%w: %w", f, streams.ErrNoSpace)
		}
	}()
	return pebble.Open(dir, opts)
}

// DefaultPause is how long Throttle holds writes after one fails with
// ENOSPC.
const DefaultPause = time.Second

// Throttle wraps fs so that a write failing with ENOSPC holds every new
// write for pause before it is retried once: Pebble retries a failed flush
// or compaction at once, forever, and on a full disk that is a loop of
// failing writes (each reported as an error) as fast as the CPU allows.
func Throttle(fs vfs.FS, pause time.Duration) vfs.FS {
	if fs == nil {
		fs = vfs.Default
	}
	return vfs.OnDiskFull(fs, func() { time.Sleep(pause) })
}
