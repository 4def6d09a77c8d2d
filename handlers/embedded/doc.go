// Package embedded is the gate on one machine: one partition whose log and
// projections are Pebble databases in a data directory, beside the signing
// keys, the node id and the admin key's hash.
//
// OpenGate opens (creating on first start) the data directory and recovers
// the partition worker (package handlers) from the projections and the log;
// the caller runs the worker and closes the gate after it stops.
package embedded
