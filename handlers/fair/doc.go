// Package fair shares a fixed number of slots (engine runs, solver
// processes) fairly among tenants: principals first, then the agents of
// each principal.
//
// # Who asks
//
// The tenant of a request travels in its context (WithTenant, TenantOf):
// the verify service sets the authenticated principal of POST /verify and
// qwed.verify, the gate's worker sets the agent and its principal before
// it runs the engine of a verify_action. A context without one is the
// anonymous tenant, a principal like any other.
//
// # The order of service
//
// A Scheduler is start-time fair queuing with unit costs, at two levels.
// Every grant, immediate or after a wait, is an item of some round: a
// principal's first item gets the current round (the round of the last
// grant), each next item the round after its principal's previous one, and
// a free slot goes to the waiting principal whose next item has the
// smallest round (ties: the one waiting longest). Inside that principal the
// same rule picks the agent, and the agent's own requests are served in
// arrival order. So a principal that floods the slots owes one round per
// request it has had, while a principal that arrives owes none: it gets the
// next slot that frees, after at most one of the flood's running requests
// ends, whatever the length of the flood's queue; and one that asks again
// right after being served waits its turn like the flood (its last round is
// remembered), so no one gains by asking one request at a time.
//
// # Bounds
//
// At most Config.PrincipalQueue requests of one principal wait; beyond
// that Acquire refuses at once with a *BusyError (ErrBusy) carrying the
// retry hint, and the other principals' queues are not touched. At most
// Config.MaxPrincipals principals are known at once; when room is needed
// the idle ones are forgotten (first those whose last round has passed,
// whose memory no longer matters), and when every known principal is
// waiting a new one is refused. Each known principal remembers at most
// PrincipalQueue agents the same way, so memory is bounded by
// MaxPrincipals × PrincipalQueue waiters and as many agents.
//
// Choosing the next principal is linear in the number of waiting
// principals; it runs only when a slot frees while some wait.
package fair
