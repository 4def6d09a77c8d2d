// Package pebblelog is the embedded event log: one partition of
// streams.Log stored in a Pebble database on local disk.
//
// Layout. A record with sequence number s is stored under the key
// 'r' + big-endian uint64(s), so Pebble's key order is log order. Its value
// is a 65-byte header followed by the payload, verbatim:
//
//	[0]      format byte: 0x01 = record with a Prev, 0x00 = first record (Prev "")
//	[1:33]   Prev as raw SHA-256 bytes (zero for the first record)
//	[33:65]  SHA-256 of the payload (the record's hash: the next record's Prev)
//	[65:]    payload
//
// One more key, "\x00format", names the layout; Open refuses a directory
// that holds some other Pebble database.
//
// Durability. Append checks that the batch extends the chain, writes every
// record in one pebble.Batch and commits it with pebble.Sync: the WAL is
// fsync'd before Append returns nil, and a crash leaves either the whole
// batch or none of it.
//
// A failed WAL write or fsync is fatal, never an error return: Pebble
// declares its commit pipeline unusable and calls Logger.Fatalf, which this
// package logs at Error and turns into a panic (as Pebble's WAL writer
// itself panics on a failed write). After a failed fsync the page cache
// can no longer be trusted to match the disk, so the only safe course is
// the one a crash takes: the process dies, and Open recovers every
// acknowledged record from the WAL on restart. Append never returns nil
// for a batch that is not durable.
//
// A full disk. Append refuses a batch with streams.ErrNoSpace, writing
// nothing, while the log's disk has less than Options.MinFreeBytes free
// beyond the batch: the reserve is what Pebble needs to finish what it
// accepted (a new WAL, a memtable flush), so Pebble itself never meets the
// end of the disk. If a write fails with ENOSPC anyway (another process
// took the reserve between the check and the write), the fatal commit
// error is the one Append recovers from: the batch is not acknowledged
// (it may still be in the WAL, and then in the log after the reopen, as
// after a crash), Append returns streams.ErrNoSpace, and the database,
// which refuses writes from then on, is reopened by the first Append after
// space returns. Any other write or fsync failure stays fatal. On a disk
// below the reserve, Open opens an existing log read-only (a read-write
// open replays the WAL into a flush that cannot be written, retried
// forever) and Append reopens it read-write once space returns. Pebble's
// error messages are logged at most once per kind and 10 s
// (diskspace.LogLimiter), and a write that fails with ENOSPC holds Pebble's
// writes for a second (diskspace.Throttle) rather than letting its flush
// retries spin.
//
// Recovery. Open reads the last record, checks its payload against its
// stored hash and its Prev against the record before it, and takes it as
// the head. A full check of the chain is streams.VerifyChain.
//
// Concurrency. Append calls are serialized (a racing writer that lost gets
// streams.ErrConflict); Head and Read run concurrently with Append and with
// each other. Read holds a Pebble iterator, so its memory use does not
// depend on the length of the log; the reopen after a full disk waits for
// a moment when no Read holds the database (it never blocks one). Close
// waits for running calls to return; it must not be called from inside a
// Read callback.
package pebblelog
