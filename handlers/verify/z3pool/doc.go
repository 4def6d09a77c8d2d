// Package z3pool keeps a pool of long-lived `z3 -in` processes and
// implements logic.Solver on them (QWED protocol v1.0 §7): long-lived
// processes, not one per query, since starting z3 costs more than most
// queries.
//
// Each query runs in a fresh solver state: the pool sends (reset) before
// it, so no declaration, assertion or learned lemma of one query reaches
// the next, and the answer (model included) depends on the query alone.
// A query is bounded twice: z3's own (set-option :timeout ms), after which
// z3 answers unknown ("timeout"/"canceled"), and a hard deadline (the
// timeout plus Config.Grace) after which the pool kills the process — z3
// does not always honour its timeout in nonlinear arithmetic — and answers
// logic.ErrSolverTimeout. A process that dies, hangs or is killed is
// replaced on its slot's next use. At most Size queries run at once; the
// others wait in their principal's queue (the tenant of the query's
// context, fair.TenantOf), and a process that frees goes to the principals
// in turn, the agents of each in turn (package fair), so one tenant's hard
// queries delay another's by at most one query. Past QueueLen queries of
// one principal waiting, Solve answers that principal
// logic.ErrSolverBusy at once; the others are not affected.
// When z3 is not installed New answers an error wrapping
// logic.ErrSolverUnavailable (the logic engine then answers QWED-ENG-004);
// when a process must be replaced and the new one cannot be started,
// that query's error wraps logic.ErrSolverInit (QWED-ENG-001, engine
// initialization failed), and the slot tries again on its next use.
//
// The caller's obligations: Close the pool when done (it kills the
// processes); a Pool is safe for concurrent use.
package z3pool
