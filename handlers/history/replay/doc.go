// Package replay reads a partition's log back: it rebuilds every
// projection into a fresh store and compares it with the live one, and
// (agentgate replay --verify) re-decides every recorded command on the
// state before it and compares the event byte for byte.
package replay
