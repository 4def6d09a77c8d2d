// Package enginehost runs the engines whose parsers are C code (the code
// engine's tree-sitter grammars, the sql engine's pg_query) in worker
// processes, so that a fault in C — which Go cannot recover — ends a
// worker, never the gate.
//
// A Host keeps Size workers: the gate's own binary started with its
// hidden engine-worker command (Serve), each spoken to over its stdin and
// stdout with length-prefixed JSON frames, one call at a time. Isolate
// wraps an engine: its Capabilities are the in-process engine's, its
// Verify sends the request to an idle worker and decodes the answer to
// the outcome the engine would have given in process (the result, the
// proof and the error details travel as the engine's own JSON).
//
// A call is bounded by Config.Deadline: past it the host kills the worker
// and the call answers ERROR with QWED-ENG-002 (details.reason
// "deadline"); a worker that dies during a call (a signal, an exit) makes
// that call ERROR with QWED-ENG-002 (details.reason "worker_died"). Only
// that call: the slot starts a fresh worker for the next one, and the
// other workers go on. A worker found dead while idle is replaced before
// the call is sent; when no worker can be started then (the binary is
// gone, the process limit is reached), the call answers ERROR with
// QWED-ENG-001, engine initialization failed (details.reason
// "worker_start"). At most Size calls run at once; the others wait in
// their principal's queue (the tenant of the call's context,
// fair.TenantOf), and a worker that frees goes to the principals in turn,
// the agents of each in turn (package fair). Past QueueLen calls of one
// principal waiting, that principal's call answers ERROR with
// QWED-SYS-002 at once; the others are not affected. A caller whose
// ctx ends first gets TIMEOUT (QWED-ENG-003) at once; its worker finishes
// (or is killed at the deadline) before it takes another call. A worker
// exits at the end of its stdin (the gate is gone) and, by its own
// watchdog, WatchdogGrace past a call's deadline.
//
// The caller's obligations: Close the host when done (it kills the
// workers); a Host is safe for concurrent use.
package enginehost
