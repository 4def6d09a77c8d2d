// Package notify is the webhook runner (issue 14, item 10): it delivers
// the consumer's notices (a transaction blocked, awaiting confirmation,
// queued, or a spending limit at 80 %) to the consumer's webhooks, each
// POST signed by the gate's attestation keys, retried with exponential
// backoff, every attempt recorded in the log.
//
// The runner holds no state of its own. The projections hold one delivery
// per (notice, webhook), created when the event with the notice is
// projected, and a due index (projections.Store.DueDeliveries); the
// runner reads what is due, POSTs it, and submits the attempt's result
// as a qwed.webhook.delivery command, whose event the rules
// (domain.webhookDelivery) mark delivered, failed, or retrying at a later
// time; its projection moves the delivery in the due index. A restart
// therefore resumes every pending delivery from the projections, and the
// log holds every attempt.
//
// Delivery is at least once: a crash after the POST and before its
// attempt is recorded sends that attempt again. Each body names its
// delivery (delivery_id, also the X-Agentgate-Delivery header), which a
// receiver uses to drop repeats. The request of an attempt's command is
// derived from the delivery ID and the attempt number, so a result
// submitted twice is recorded once.
//
// Signature: X-Agentgate-Signature holds a compact JWS with a detached
// payload (RFC 7515 Appendix F) over the body as sent, ES256 with the
// kid of the attestation key that signed it; a receiver verifies it with
// the gate's /.well-known/jwks.json (attest.KeySet.VerifyWebhook).
//
// Reach: a webhook URL is any http(s) URL its consumer registered. The
// runner's client checks each address it dials against the business
// calls' network policy (adapter.NetworkPolicy), on the address actually
// dialled (after DNS resolution, so a name that resolves to an internal
// address is refused too): link-local (cloud metadata), unspecified,
// multicast and broadcast addresses always, loopback and private ones
// unless Config.AllowPrivate. It follows no redirects and reads at most
// MaxResponseBytes of an answer, which it discards.
package notify
