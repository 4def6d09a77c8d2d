package projections

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
)

// The webhook projections (issue 14): each consumer's webhooks, and one
// delivery per (notice, webhook): the notice-th notice of an event with a
// transaction's notices, to each webhook of the transaction's consumer
// that wants its kind as of that event (Fold notes them while folding,
// when the state holds exactly the webhooks of the moment). A delivery is
// created pending and due at once; each webhook.delivery_recorded event
// records an attempt and moves it to delivered, failed, or retrying with
// its next attempt's time. The due index holds the pending and retrying
// ones by that time: the notify runner reads it, so a restart resumes
// every delivery not finished (nothing else remembers them).
const (
	tWebhook     = 'W' // W + consumer + webhook id -> domain.Webhook (JSON)
	tDelivery    = 'D' // D + consumer + partition(4) + seq(8) + notice(4) + webhook id -> Delivery (JSON)
	tDeliveryID  = 'J' // J + delivery id -> its D key
	tDeliveryDue = 'N' // N + next attempt (Unix ns, 8) + the D key -> ""
)

// Delivery is one notice's delivery to one webhook, as the projections
// hold it: what is sent (the notice and its transaction's summary) and
// the outcome of the last attempt.
type Delivery struct {
	ID        string `json:"delivery_id"`
	WebhookID string `json:"webhook_id"`
	Consumer  string `json:"consumer"`
	// Partition, Seq and Notice name the notice: the Notice-th of the
	// event at Seq of Partition; CreatedAt is that event's time.
	Partition int32     `json:"partition"`
	Seq       uint64    `json:"seq"`
	Notice    int       `json:"notice"`
	CreatedAt time.Time `json:"created_at"`
	Kind      string    `json:"kind"`
	PolicyID  string    `json:"policy_id,omitempty"`
	Message   string    `json:"message"`
	// The transaction the notice is about, as of the event.
	TransactionID     string `json:"transaction_id,omitempty"`
	AgentID           string `json:"agent_id,omitempty"`
	BusinessID        string `json:"business_id,omitempty"`
	AmountCents       int64  `json:"amount_cents"`
	Currency          string `json:"currency,omitempty"`
	TransactionStatus string `json:"transaction_status,omitempty"`
	// Decision is the blocked agent decision an agent_blocked notice is
	// about (QWED-Agent spec v1.1 §2.3): never its parameters.
	Decision *domain.AgentNotice `json:"decision,omitempty"`
	// Status is pending (no attempt yet), delivered, retrying or failed
	// (domain.Delivery*); Attempts the attempts recorded; HTTPStatus and
	// Error the last one's; NextAt the next attempt's time (pending and
	// retrying only); UpdatedAt the time of the last attempt's record.
	Status     string     `json:"status"`
	Attempts   int        `json:"attempts"`
	HTTPStatus int        `json:"http_status,omitempty"`
	Error      string     `json:"error,omitempty"`
	NextAt     *time.Time `json:"next_attempt_at,omitempty"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// Final reports whether the delivery is finished (delivered or failed).
func (d *Delivery) Final() bool {
	return d.Status == domain.DeliveryDelivered || d.Status == domain.DeliveryFailed
}

// noticeHooks is an event with notices and the webhooks its consumer had
// as the event was folded.
type noticeHooks struct {
	ev    *domain.Event
	hooks []domain.Webhook
}

// noteNotices notes the consumer's webhooks of an event with notices,
// before the event is folded (Fold.Add): a transaction's consumer's, or
// those of the principal of a blocked agent decision that name
// agent_blocked (on Kafka a partition holds the webhooks of the consumers
// it is the home of only: another partition notes none, and the gate
// relays the notice to the home partition).
func (f *Fold) noteNotices(st *domain.State, ev *domain.Event) {
	consumer, agent := "", false
	switch {
	case ev.Transaction != nil && len(ev.Transaction.Notices) > 0:
		consumer = ev.Transaction.Consumer
	case ev.Decided != nil && ev.Decided.Notify != nil, ev.Type == domain.EvAgentBlockRelayed:
		n, ok := domain.AgentNoticeOf(ev)
		if !ok {
			return
		}
		consumer, agent = n.Principal, true
	default:
		return
	}
	var hooks []domain.Webhook
	for _, w := range domain.ConsumerWebhooks(st, consumer) {
		if !agent || domain.WebhookWants(w, domain.NoticeAgentBlocked) {
			hooks = append(hooks, *w)
		}
	}
	if len(hooks) > 0 {
		f.notices = append(f.notices, noticeHooks{ev: ev, hooks: hooks})
	}
}

// webhookBatch is what a projection batch holds of the webhook
// projections: the events' webhooks (from the Fold) and the deliveries it
// wrote, which later events of the same batch read back (the batch is not
// indexed).
type webhookBatch struct {
	notices    []noticeHooks
	next       int                  // the next of notices to project
	deliveries map[string]*Delivery // by D key
}

// deliveryKey is the D key of a delivery.
func deliveryKey(consumer string, partition int32, seq uint64, notice int, webhook string) []byte {
	b := key(tDelivery, consumer)
	b = binary.BigEndian.AppendUint32(b, uint32(partition))
	b = binary.BigEndian.AppendUint64(b, seq)
	b = binary.BigEndian.AppendUint32(b, uint32(notice))
	return appendStr(b, webhook)
}

// dueKey is the due index key of the delivery at dk due at t.
func dueKey(t time.Time, dk []byte) []byte {
	b := append(make([]byte, 0, 9+len(dk)), tDeliveryDue)
	b = binary.BigEndian.AppendUint64(b, uint64(t.UnixNano()))
	return append(b, dk...)
}

// webhookEvent projects ev's part of the webhook projections.
func (w *batchWriter) webhookEvent(ev *domain.Event) error {
	switch {
	case ev.Type == domain.EvWebhookChanged && ev.Webhook != nil:
		k := key(tWebhook, ev.Webhook.Consumer, ev.Webhook.ID)
		if ev.Webhook.URL == "" {
			return w.b.Delete(k, nil)
		}
		return w.setJSON(k, ev.Webhook)
	case ev.Type == domain.EvDeliveryRecorded && ev.Delivery != nil && ev.Command != nil:
		return w.deliveryRecorded(ev)
	case ev.Transaction != nil && len(ev.Transaction.Notices) > 0:
		return w.newDeliveries(ev)
	case ev.Decided != nil && ev.Decided.Notify != nil, ev.Type == domain.EvAgentBlockRelayed:
		return w.newAgentDelivery(ev)
	}
	return nil
}

// noted returns the webhooks Fold noted for ev (nil: none).
func (w *batchWriter) noted(ev *domain.Event) []domain.Webhook {
	h := &w.hooks
	for h.next < len(h.notices) && h.notices[h.next].ev != ev {
		h.next++
	}
	if h.next == len(h.notices) {
		return nil // the consumer had no webhook
	}
	h.next++
	return h.notices[h.next-1].hooks
}

// newAgentDelivery writes the pending deliveries of the notice of a
// blocked agent decision (ev's only notice, index 0) to the webhooks of
// its principal that name agent_blocked.
func (w *batchWriter) newAgentDelivery(ev *domain.Event) error {
	hooks := w.noted(ev)
	n, ok := domain.AgentNoticeOf(ev)
	if len(hooks) == 0 || !ok {
		return nil
	}
	if home := w.s.noticeHome; home != nil && ev.Type == domain.EvActionDecided && home(n.Principal) != ev.Partition {
		return nil // relayed to the home partition, delivered there
	}
	for j := range hooks {
		hook := &hooks[j]
		at := ev.Time
		blocked := *n
		d := &Delivery{
			ID: domain.DeliveryID(ev.Partition, ev.Seq, 0, hook.ID), WebhookID: hook.ID, Consumer: n.Principal,
			Partition: ev.Partition, Seq: ev.Seq, CreatedAt: ev.Time, Kind: domain.NoticeAgentBlocked, Message: n.Reason(),
			AgentID: n.AgentID, Decision: &blocked, Status: domain.DeliveryPending, NextAt: &at, UpdatedAt: ev.Time,
		}
		if err := w.addDelivery(d); err != nil {
			return err
		}
	}
	return nil
}

// addDelivery writes a new pending delivery and its ID's index entry.
func (w *batchWriter) addDelivery(d *Delivery) error {
	dk := deliveryKey(d.Consumer, d.Partition, d.Seq, d.Notice, d.WebhookID)
	if err := w.putDelivery(dk, d, nil); err != nil {
		return err
	}
	return w.b.Set(key(tDeliveryID, d.ID), dk, nil)
}

// newDeliveries writes the pending deliveries of ev's notices.
func (w *batchWriter) newDeliveries(ev *domain.Event) error {
	hooks := w.noted(ev)
	if len(hooks) == 0 {
		return nil
	}
	tx := ev.Transaction
	for i, n := range tx.Notices {
		if i > domain.MaxNoticeIndex {
			break
		}
		for j := range hooks {
			hook := &hooks[j]
			if !domain.WebhookWants(hook, n.Kind) {
				continue
			}
			at := ev.Time
			d := &Delivery{
				ID: domain.DeliveryID(ev.Partition, ev.Seq, i, hook.ID), WebhookID: hook.ID, Consumer: tx.Consumer,
				Partition: ev.Partition, Seq: ev.Seq, Notice: i, CreatedAt: ev.Time,
				Kind: n.Kind, PolicyID: n.PolicyID, Message: n.Message,
				TransactionID: tx.ID, AgentID: tx.AgentID, BusinessID: tx.BusinessID, AmountCents: tx.AmountCents,
				Currency: tx.Currency, TransactionStatus: tx.Status,
				Status: domain.DeliveryPending, NextAt: &at, UpdatedAt: ev.Time,
			}
			if err := w.addDelivery(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// deliveryRecorded records an attempt on its delivery. An attempt that is
// not after the last recorded one, or of a delivery the projections do
// not hold (its notice's event is not projected), changes nothing.
func (w *batchWriter) deliveryRecorded(ev *domain.Event) error {
	r := ev.Delivery
	dk := deliveryKey(ev.Command.Principal, ev.Partition, r.Seq, r.Notice, r.WebhookID)
	d, err := w.delivery(dk)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Attempt <= d.Attempts || d.Final() {
		return nil
	}
	prev := d.NextAt
	n := *d
	n.Status, n.Attempts, n.HTTPStatus, n.Error, n.UpdatedAt = r.Status, r.Attempt, r.HTTPStatus, r.Error, ev.Time
	n.NextAt = nil
	if r.NextAt != nil {
		t := *r.NextAt
		n.NextAt = &t
	}
	return w.putDelivery(dk, &n, prev)
}

// delivery reads the delivery at dk: the batch's own write, else the
// store's.
func (w *batchWriter) delivery(dk []byte) (*Delivery, error) {
	if d := w.hooks.deliveries[string(dk)]; d != nil {
		return d, nil
	}
	d := new(Delivery)
	if err := w.s.getJSONHeld(dk, d); err != nil {
		return nil, err
	}
	return d, nil
}

// putDelivery writes d at dk and moves its due index entry from prevDue
// (nil: none) to d.NextAt (nil: none).
func (w *batchWriter) putDelivery(dk []byte, d *Delivery, prevDue *time.Time) error {
	if prevDue != nil {
		if err := w.b.Delete(dueKey(*prevDue, dk), nil); err != nil {
			return err
		}
	}
	if d.NextAt != nil {
		if err := w.b.Set(dueKey(*d.NextAt, dk), nil, nil); err != nil {
			return err
		}
	}
	if w.hooks.deliveries == nil {
		w.hooks.deliveries = map[string]*Delivery{}
	}
	w.hooks.deliveries[string(dk)] = d
	return w.setJSON(dk, d)
}

// Webhooks returns consumer's webhooks in ID order (every consumer's, in
// consumer then ID order, for domain.AdminPrincipal).
func (s *Store) Webhooks(consumer string) ([]domain.Webhook, error) {
	p := []byte{tWebhook}
	if consumer != domain.AdminPrincipal {
		p = key(tWebhook, consumer)
	}
	var out []domain.Webhook
	err := s.scan(p, func(k, v []byte) error {
		var h domain.Webhook
		if err := json.Unmarshal(v, &h); err != nil {
			return fmt.Errorf("decoding webhook %q: %w", k, err)
		}
		out = append(out, h)
		return nil
	})
	return out, err
}

// Webhook returns consumer's webhook id (any consumer's for
// domain.AdminPrincipal), or ErrNotFound.
func (s *Store) Webhook(consumer, id string) (*domain.Webhook, error) {
	if consumer == domain.AdminPrincipal {
		hooks, err := s.Webhooks(consumer)
		if err != nil {
			return nil, err
		}
		for i := range hooks {
			if hooks[i].ID == id {
				return &hooks[i], nil
			}
		}
		return nil, ErrNotFound
	}
	h := new(domain.Webhook)
	if err := s.getJSON(key(tWebhook, consumer, id), h); err != nil {
		return nil, err
	}
	return h, nil
}

// DeliveryFilter narrows a list of deliveries: each set field must match.
type DeliveryFilter struct {
	WebhookID string
	Status    string
	Kind      string
}

func (f DeliveryFilter) match(d *Delivery) bool {
	return (f.WebhookID == "" || d.WebhookID == f.WebhookID) && (f.Status == "" || d.Status == f.Status) &&
		(f.Kind == "" || d.Kind == f.Kind)
}

// Delivery returns delivery id of consumer (any consumer's for
// domain.AdminPrincipal), or ErrNotFound: another consumer's delivery is
// not found.
func (s *Store) Delivery(consumer, id string) (*Delivery, error) {
	defer s.hold()()
	dk, closer, err := s.db.Get(key(tDeliveryID, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading delivery %q: %w", id, err)
	}
	k := append([]byte(nil), dk...)
	closer.Close()
	d := new(Delivery)
	if err := s.getJSONHeld(k, d); err != nil {
		return nil, err
	}
	if consumer != domain.AdminPrincipal && d.Consumer != consumer {
		return nil, ErrNotFound
	}
	return d, nil
}

// Deliveries lists consumer's deliveries (every consumer's for
// domain.AdminPrincipal) oldest first, matching f, after the delivery
// with ID after ("" from the first; a delivery that is not the
// consumer's is ErrNotFound), at most limit of them and at most maxBytes
// of their JSON (MaxPageBytes when maxBytes <= 0; a page holds at least
// one). next is the after of the next page, "" on the last. A filter
// scans the consumer's deliveries: at most scanLimit are read per call
// (past it next resumes where the scan stopped, with a short page).
func (s *Store) Deliveries(consumer string, f DeliveryFilter, after string, limit, maxBytes int) (out []Delivery, next string, err error) {
	prefix := []byte{tDelivery}
	if consumer != domain.AdminPrincipal {
		prefix = key(tDelivery, consumer)
	}
	lo := prefix
	if after != "" {
		d, err := s.Delivery(consumer, after)
		if err != nil {
			return nil, "", err
		}
		lo = append(deliveryKey(d.Consumer, d.Partition, d.Seq, d.Notice, d.WebhookID), 0)
	}
	defer s.hold()()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, "", fmt.Errorf("listing deliveries: %w", err)
	}
	defer it.Close()
	pg := newPager(limit, maxBytes)
	scanned := 0
	var last string
	for it.First(); it.Valid(); it.Next() {
		d := new(Delivery)
		if err := json.Unmarshal(it.Value(), d); err != nil {
			return nil, "", fmt.Errorf("decoding delivery %q: %w", it.Key(), err)
		}
		if scanned++; scanned > deliveryScanLimit {
			return out, last, nil
		}
		if !f.match(d) {
			last = d.ID
			continue
		}
		more, err := pg.fits(d)
		if err != nil {
			return nil, "", err
		}
		if !more {
			return out, last, nil
		}
		out = append(out, *d)
		last = d.ID
	}
	return out, "", nil
}

// deliveryScanLimit bounds the deliveries one Deliveries call reads.
const deliveryScanLimit = 10_000

// DueDeliveries returns at most limit deliveries due at now (pending, or
// retrying with their next attempt at or before now), earliest first.
func (s *Store) DueDeliveries(now time.Time, limit int) ([]Delivery, error) {
	hi := binary.BigEndian.AppendUint64([]byte{tDeliveryDue}, uint64(now.UnixNano())+1)
	defer s.hold()()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{tDeliveryDue}, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("listing due deliveries: %w", err)
	}
	defer it.Close()
	var out []Delivery
	for it.First(); it.Valid() && len(out) < limit; it.Next() {
		dk := it.Key()[9:]
		d := new(Delivery)
		if err := s.getJSONHeld(dk, d); err != nil {
			return nil, fmt.Errorf("reading a due delivery: %w", err)
		}
		out = append(out, *d)
	}
	return out, nil
}
