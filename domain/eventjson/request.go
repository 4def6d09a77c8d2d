package eventjson

import "github.com/agentgate/agentgate/domain"

// DecodeVerifyRequest decodes the body of a verify_action request — the
// members of domain.VerifyAction plus agent_id and agent_token (the HTTP
// endpoint's and the CloudEvent's body) — by the fast path of the event
// decoder, strictly: ok is true only when a json.Decoder with
// DisallowUnknownFields, decoding p into a zero struct of those members,
// succeeds with exactly v's members and the two strings returned, and
// nothing but white space follows the value. Otherwise (an unknown member,
// anything the fast path leaves to encoding/json, invalid JSON) ok is
// false, v is in an unspecified state, and the caller decodes p with
// encoding/json, which also produces the error to report.
func DecodeVerifyRequest(p []byte, v *domain.VerifyAction) (agentID, agentToken string, ok bool) {
	d := decoder{p: p, strict: true}
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		if d.verifyMember(k, v, &seen) {
			continue
		}
		switch string(k) {
		case "agent_id":
			d.once(&seen, 3)
			agentID = d.str()
		case "agent_token":
			d.once(&seen, 4)
			agentToken = d.str()
		default:
			d.fail()
		}
	}
	d.end()
	if d.failed {
		return "", "", false
	}
	return agentID, agentToken, true
}
