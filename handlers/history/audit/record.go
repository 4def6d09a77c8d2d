package audit

import (
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
)

// CheckRecord checks what one record says of itself, apart from the
// chain around it (a tenant-scoped compliance bundle holds an agent's
// events without their neighbours): a checkpoint covers the event before
// it (its seq and head are the record's seq-1 and prev) and its signature
// signs exactly its content; every attestation verifies and attests this
// event. With keys nil no signature is checked. It returns the number of
// attestations verified, or the *Break that describes the fault.
func CheckRecord(keys *attest.KeySet, r Record) (int, error) {
	hdr, err := parseHeader(r.Payload)
	if err != nil {
		return 0, &Break{Partition: r.Partition, Seq: r.Seq, Offset: r.Offset, Kind: KindMalformed,
			Detail: "the event's seq, prev, time or type cannot be read: " + err.Error()}
	}
	if hdr.partition != r.Partition {
		return 0, &Break{Partition: r.Partition, Seq: hdr.seq, Offset: r.Offset, Kind: KindMalformed,
			Detail: "the event belongs to another partition"}
	}
	v := &verifier{keys: keys, opts: Options{SkipSignatures: keys == nil}}
	c := &chain{}
	if string(hdr.typ) == string(domain.EvLogCheckpointed) {
		return 0, v.checkpoint(c, r, hdr)
	}
	if keys != nil && mayHoldAttestation(hdr.typ, r.Payload) {
		if err := v.attestations(c, r); err != nil {
			return 0, err
		}
	}
	return int(c.rep.Attestations), nil
}
