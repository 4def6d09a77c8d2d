// Package timetravel answers what an agent's state was right after a given
// event of the log (issue 5): from the nearest projection snapshot at or
// before it, folding the agent's events up to it.
package timetravel
