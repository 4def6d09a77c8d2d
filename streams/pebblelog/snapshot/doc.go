// Package snapshot opens a private, read-only view of a data directory's
// event log for the offline readers (export, backtest, audit of a bundle's
// source): they must never write to the live log.
//
// Open copies the log directory into a temporary directory and opens the
// copy. Pebble never rewrites a table or blob file once written, so those
// are hard-linked (copied when the temporary directory is on another file
// system); the small mutable files (MANIFEST, WAL, OPTIONS, markers) are
// copied. Whatever Pebble does when it opens the copy (replaying the WAL,
// flushing, compacting) happens in the copy: the live directory's files
// keep their bytes. Close removes the copy.
//
// The gate may be running on the directory while a snapshot is taken; a
// compaction that deletes a file between the listing and the link makes
// Open fail with a clear error, and a second attempt sees the new files.
// The copy holds the records durable when it was taken.
package snapshot
