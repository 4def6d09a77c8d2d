// Package a2a holds the pure rules of agent-to-agent interception (QWED
// A2A, the verification interceptor for Google's Agent-to-Agent protocol):
// the AgentMessage and its validation (stage 0), the guards that verify a
// payload (finance_guard, logic_guard, code_guard), the token bucket of a
// sender→receiver pair, and the claims of a verdict's attestation.
//
// Like the rest of domain/ it reads no clock, no randomness and no map
// order: every function is a function of its arguments, so a verdict
// recorded in the log is re-decided byte for byte by replay. It imports
// nothing of the gate's (the domain package imports it), so its errors
// carry the catalogue's codes as plain strings.
package a2a
