// Package diskspace keeps the gate's Pebble databases working on a disk
// that fills up.
//
// Pebble treats a failed write of its write-ahead log or MANIFEST as fatal
// (it calls Logger.Fatalf), retries a failed flush in a tight loop, and
// cannot open a database read-write on a disk with no space left. So the
// stores never let Pebble reach the end of the disk: a Guard refuses a write
// (streams.ErrNoSpace, nothing written) while the disk holding the database
// has less than a reserve free, the reserve being what Pebble needs to
// finish the work already accepted (rotate a write-ahead log, flush a
// memtable). A store that finds the disk below its reserve at start-up
// opens read-only and becomes writable again by itself once space returns.
//
// Throttle slows Pebble's own retries down when a write does reach the end
// of the disk anyway (another process took the reserve), and LogLimiter
// bounds the log lines such retries and refused requests produce.
//
// FullFS is a file system for tests that fills up on demand.
package diskspace
