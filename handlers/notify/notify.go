package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// Named limits and defaults of the runner.
const (
	// DefaultInterval is how often the runner looks for due deliveries
	// when nothing wakes it.
	DefaultInterval = time.Second
	// DefaultConcurrency bounds the deliveries in flight at once.
	DefaultConcurrency = 8
	// DefaultTimeout bounds one attempt: connecting, sending, and reading
	// the answer's status and up to MaxResponseBytes of its body.
	DefaultTimeout = 10 * time.Second
	// MaxResponseBytes is how much of an answer's body the runner reads
	// (and discards) before it closes the connection.
	MaxResponseBytes = 64 << 10
	// dueBatch is how many due deliveries one round reads.
	dueBatch = 256
)

// The headers of a webhook POST.
const (
	// SignatureHeader carries the detached compact JWS over the body.
	SignatureHeader = "X-Agentgate-Signature"
	// DeliveryHeader carries the delivery's ID, the receiver's key to
	// drop a repeated attempt.
	DeliveryHeader = "X-Agentgate-Delivery"
	// EventHeader carries the notice's kind.
	EventHeader = "X-Agentgate-Event"
)

// RequestSource is the request source of the runner's commands; the
// request ID is the delivery ID, "/", the attempt number.
const RequestSource = "agentgate/notify"

// Gate records the attempts: the worker of the partition that holds the
// deliveries (*handlers.Worker).
type Gate interface {
	Submit(ctx context.Context, cmd *domain.Command) (*domain.Event, error)
}

// Source is where the runner reads the due deliveries and the webhooks:
// the projections of the partition Gate decides (*projections.Store).
type Source interface {
	DueDeliveries(now time.Time, limit int) ([]projections.Delivery, error)
	Delivery(consumer, id string) (*projections.Delivery, error)
	Webhook(consumer, id string) (*domain.Webhook, error)
}

// Config configures a Runner. Gate, Store and Sign are required.
type Config struct {
	Gate  Gate
	Store Source
	// Sign returns the detached JWS of a body (attest.Keyring.SignWebhook).
	Sign func(payload []byte) (string, error)
	// Client sends the POSTs; nil is NewClient(AllowPrivate).
	Client *http.Client
	// AllowPrivate lets the default client reach loopback, private and
	// link-local addresses (tests, and gates whose consumers are on the
	// same network).
	AllowPrivate bool
	// Clock is the time deliveries are due by; nil is time.Now.
	Clock func() time.Time
	// Interval, Concurrency and Timeout default to DefaultInterval,
	// DefaultConcurrency and DefaultTimeout.
	Interval    time.Duration
	Concurrency int
	Timeout     time.Duration
	// Logger logs failures of the runner (never a body); nil is
	// slog.Default().
	Logger *slog.Logger
}

// Runner delivers the due deliveries of one partition. Run runs it; Wake
// makes it look for due deliveries at once (after a committed batch).
type Runner struct {
	cfg  Config
	wake chan struct{}

	mu       sync.Mutex
	inflight map[string]bool
}

// New returns a runner over cfg. It fails when Gate, Store or Sign is nil.
func New(cfg Config) (*Runner, error) {
	if cfg.Gate == nil || cfg.Store == nil || cfg.Sign == nil {
		return nil, errors.New("notify.New: Config.Gate, Config.Store and Config.Sign are required")
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(cfg.AllowPrivate)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Runner{cfg: cfg, wake: make(chan struct{}, 1), inflight: map[string]bool{}}, nil
}

// Wake makes the runner look for due deliveries now. It never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run delivers due deliveries until ctx ends, then waits for the attempts
// in flight (each bounded by Config.Timeout) and returns nil.
func (r *Runner) Run(ctx context.Context) error {
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	sem := make(chan struct{}, r.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		r.round(ctx, sem, &wg)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.wake:
		}
	}
}

// round starts an attempt of every due delivery not in flight, at most
// Config.Concurrency at once.
func (r *Runner) round(ctx context.Context, sem chan struct{}, wg *sync.WaitGroup) {
	now := r.cfg.Clock()
	due, err := r.cfg.Store.DueDeliveries(now, dueBatch)
	if err != nil {
		r.cfg.Logger.Error("reading due webhook deliveries", "err", err)
		return
	}
	for i := range due {
		if !r.claim(due[i].ID) {
			continue
		}
		// The list may predate an attempt that ended since: read the
		// delivery again, now that no other attempt of it can start.
		d, err := r.cfg.Store.Delivery(due[i].Consumer, due[i].ID)
		if err != nil || d.Final() || d.NextAt == nil || d.NextAt.After(now) {
			r.release(due[i].ID)
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			r.release(d.ID)
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer r.release(d.ID)
			if err := r.Attempt(ctx, d); err != nil && ctx.Err() == nil {
				r.cfg.Logger.Warn("recording a webhook delivery attempt", "delivery", d.ID, "err", err)
			}
			r.Wake() // a full round may have left due ones behind
		}()
	}
}

func (r *Runner) claim(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inflight[id] {
		return false
	}
	r.inflight[id] = true
	return true
}

func (r *Runner) release(id string) {
	r.mu.Lock()
	delete(r.inflight, id)
	r.mu.Unlock()
}

// Body is the JSON body of a webhook POST: the notice, the delivery and
// attempt it belongs to, the transaction it is about (the execute rules'
// notices) or the blocked agent decision (agent_blocked: never the
// action's parameters, query, code or target), and the log position of
// the event that raised it.
type Body struct {
	DeliveryID  string              `json:"delivery_id"`
	WebhookID   string              `json:"webhook_id"`
	Attempt     int                 `json:"attempt"`
	Consumer    string              `json:"consumer"`
	Kind        string              `json:"kind"`
	PolicyID    string              `json:"policy_id,omitempty"`
	Message     string              `json:"message"`
	Transaction *BodyTransaction    `json:"transaction,omitempty"`
	Decision    *domain.AgentNotice `json:"decision,omitempty"`
	Event       BodyEvent           `json:"event"`
}

// BodyTransaction is the transaction a notice is about, as of its event.
type BodyTransaction struct {
	ID          string `json:"transaction_id"`
	AgentID     string `json:"agent_id"`
	BusinessID  string `json:"business_id"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Status      string `json:"status"`
}

// BodyEvent is the log position and time of the event with the notice.
type BodyEvent struct {
	Partition int32     `json:"partition"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
}

// BodyOf returns the body of attempt of delivery d.
func BodyOf(d *projections.Delivery, attempt int) Body {
	b := Body{DeliveryID: d.ID, WebhookID: d.WebhookID, Attempt: attempt, Consumer: d.Consumer, Kind: d.Kind,
		PolicyID: d.PolicyID, Message: d.Message, Decision: d.Decision, Event: BodyEvent{Partition: d.Partition, Seq: d.Seq, Time: d.CreatedAt}}
	if d.TransactionID != "" {
		b.Transaction = &BodyTransaction{ID: d.TransactionID, AgentID: d.AgentID, BusinessID: d.BusinessID,
			AmountCents: d.AmountCents, Currency: d.Currency, Status: d.TransactionStatus}
	}
	return b
}

// Attempt makes the next attempt of delivery d (POSTs it to its webhook's
// URL as it is now, or, if the webhook is gone, sends nothing) and records
// the result. The error is the recording's: a failed POST is a result.
func (r *Runner) Attempt(ctx context.Context, d *projections.Delivery) error {
	res := &domain.DeliveryResult{WebhookID: d.WebhookID, Seq: d.Seq, Notice: d.Notice, Attempt: d.Attempts + 1}
	hook, err := r.cfg.Store.Webhook(d.Consumer, d.WebhookID)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		res.Error = "webhook deleted"
	case err != nil:
		return fmt.Errorf("reading webhook %s: %w", d.WebhookID, err)
	default:
		res.HTTPStatus, res.Error = r.post(ctx, hook.URL, d, res.Attempt)
	}
	cmd := &domain.Command{Type: domain.CmdDelivery, Principal: d.Consumer, Delivery: res,
		Request: domain.RequestID{Source: RequestSource, ID: d.ID + "/" + strconv.Itoa(res.Attempt)}}
	ev, err := r.cfg.Gate.Submit(ctx, cmd)
	if err != nil {
		return err
	}
	if ev.Type != domain.EvDeliveryRecorded {
		return fmt.Errorf("the gate refused the attempt: %v", ev.Error)
	}
	return nil
}

// post sends attempt of d to url and returns the answer's status, or the
// error that prevented one (bounded by domain.MaxDeliveryErrorBytes).
func (r *Runner) post(ctx context.Context, url string, d *projections.Delivery, attempt int) (int, string) {
	body, err := json.Marshal(BodyOf(d, attempt))
	if err != nil {
		return 0, clip("encoding the body: " + err.Error())
	}
	sig, err := r.cfg.Sign(body)
	if err != nil {
		return 0, clip("signing the body: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, clip("building the request: " + err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentgate-webhooks")
	req.Header.Set(SignatureHeader, sig)
	req.Header.Set(DeliveryHeader, d.ID)
	req.Header.Set(EventHeader, d.Kind)
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		return 0, clip(err.Error())
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
	_ = resp.Body.Close()
	return resp.StatusCode, ""
}

// clip bounds an error text to domain.MaxDeliveryErrorBytes, on a UTF-8
// boundary.
func clip(s string) string {
	if len(s) <= domain.MaxDeliveryErrorBytes {
		return s
	}
	s = s[:domain.MaxDeliveryErrorBytes]
	for len(s) > 0 && s[len(s)-1]&0xc0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xc0 {
		s = s[:len(s)-1]
	}
	return s
}
