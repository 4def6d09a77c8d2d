package a2aproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Agent Card paths, relative to an agent's base URL: A2A 0.3 and later,
// and the path of earlier versions.
const (
	CardPath    = ".well-known/agent-card.json"
	OldCardPath = ".well-known/agent.json"
)

// Card limits.
const (
	// MaxCardBytes bounds an upstream's Agent Card.
	MaxCardBytes = 256 << 10
	// CardTimeout bounds one fetch of an Agent Card.
	CardTimeout = 5 * time.Second
	// DefaultCardTTL is how long a fetched card is served before it is
	// fetched again.
	DefaultCardTTL = time.Minute
	// cardRetry is how long a failed fetch is answered from its error
	// before the card is fetched again (an unauthenticated card request
	// never makes more than one fetch per upstream in this time).
	cardRetry = 5 * time.Second
)

// card is an upstream's Agent Card as fetched, and the JSON-RPC endpoint
// it names.
type card struct {
	members  map[string]json.RawMessage
	endpoint *url.URL
}

// cardCache holds the last fetch of one upstream's card.
type cardCache struct {
	mu      sync.Mutex
	card    *card
	err     error
	fetched time.Time
}

// get returns the upstream's card, fetched at most once per ttl (cardRetry
// after a failure).
func (u *upstream) get(ctx context.Context, p *Proxy) (*card, error) {
	u.cards.mu.Lock()
	defer u.cards.mu.Unlock()
	now := p.cfg.Clock()
	c := &u.cards
	switch {
	case c.card != nil && now.Sub(c.fetched) < p.cfg.CardTTL:
		return c.card, nil
	case c.err != nil && now.Sub(c.fetched) < cardRetry:
		return nil, c.err
	}
	got, err := u.fetchCard(ctx, p)
	c.fetched = p.cfg.Clock()
	if err != nil {
		c.err = err
		p.log.Warn("fetching an upstream's Agent Card", "upstream", u.Name, "err", err)
		// A card fetched earlier is still served when a refresh fails.
		if c.card != nil {
			return c.card, nil
		}
		return nil, err
	}
	c.card, c.err = got, nil
	return got, nil
}

// fetchCard fetches the card from the upstream's base URL (the current
// path, then the older one), bounded by CardTimeout and MaxCardBytes.
func (u *upstream) fetchCard(ctx context.Context, p *Proxy) (*card, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CardTimeout)
	defer cancel()
	var errs []error
	for _, path := range []string{CardPath, OldCardPath} {
		body, err := u.fetch(ctx, p, u.URL.JoinPath(path).String())
		if err == nil {
			return u.parseCard(body)
		}
		errs = append(errs, err)
		if !errors.Is(err, errNoCard) {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// errNoCard is a 404 at a card path.
var errNoCard = errors.New("no Agent Card at this path")

func (u *upstream) fetch(ctx context.Context, p *Proxy, target string) ([]byte, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("building the card request: %w", err)
	}
	r.Header.Set("Accept", "application/json")
	r.Header.Set("A2A-Version", "1.0")
	resp, err := p.client.Do(r)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("fetching %s: %w", target, errNoCard)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: HTTP status %d", target, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxCardBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", target, err)
	}
	if len(body) > MaxCardBytes {
		return nil, fmt.Errorf("the card at %s is larger than %d bytes", target, MaxCardBytes)
	}
	return body, nil
}

// parseCard reads a card and the JSON-RPC endpoint it names: A2A 1.0's
// supportedInterfaces (protocolBinding JSONRPC), else A2A 0.3's url (with
// preferredTransport JSONRPC or none) or additionalInterfaces. The endpoint
// must be on the origin of the upstream's configured URL: a card never
// sends the gate elsewhere.
func (u *upstream) parseCard(body []byte) (*card, error) {
	if err := checkJSON(body); err != nil {
		return nil, fmt.Errorf("reading the Agent Card: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, errors.New("the Agent Card is not a JSON object")
	}
	raw := jsonRPCURL(m)
	if raw == "" {
		return nil, errors.New("the Agent Card names no JSON-RPC interface")
	}
	ep, err := u.URL.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the Agent Card's JSON-RPC url %q: %w", truncate(raw, 128), err)
	}
	if ep.Scheme != u.URL.Scheme || ep.Host != u.URL.Host || ep.User != nil {
		return nil, fmt.Errorf("the Agent Card's JSON-RPC url %s is not on the upstream's origin %s://%s", truncate(ep.Redacted(), 128), u.URL.Scheme, u.URL.Host)
	}
	ep.Fragment, ep.RawFragment = "", ""
	return &card{members: m, endpoint: ep}, nil
}

// agentInterface is an entry of supportedInterfaces (A2A 1.0) or
// additionalInterfaces (A2A 0.3).
type agentInterface struct {
	URL       string `json:"url"`
	Binding   string `json:"protocolBinding"`
	BindingPB string `json:"protocol_binding"`
	Transport string `json:"transport"`
}

func (i agentInterface) jsonRPC() bool {
	b := i.Binding
	if b == "" {
		b = i.BindingPB
	}
	if b == "" {
		b = i.Transport
	}
	return strings.EqualFold(b, "JSONRPC")
}

func interfaces(m map[string]json.RawMessage, keys ...string) []agentInterface {
	for _, k := range keys {
		if raw, ok := m[k]; ok {
			var is []agentInterface
			if json.Unmarshal(raw, &is) == nil {
				return is
			}
		}
	}
	return nil
}

// jsonRPCURL returns the url of the card's JSON-RPC interface, "" if none.
func jsonRPCURL(m map[string]json.RawMessage) string {
	for _, i := range interfaces(m, "supportedInterfaces", "supported_interfaces") {
		if i.jsonRPC() && i.URL != "" {
			return i.URL
		}
	}
	var preferred, top string
	_ = json.Unmarshal(m["preferredTransport"], &preferred)
	_ = json.Unmarshal(m["url"], &top)
	if top != "" && (preferred == "" || strings.EqualFold(preferred, "JSONRPC")) {
		return top
	}
	for _, i := range interfaces(m, "additionalInterfaces") {
		if i.jsonRPC() && i.URL != "" {
			return i.URL
		}
	}
	return ""
}

// rewrite returns the card as the gate serves it: its JSON-RPC interface
// is gateURL (A2A 1.0 and 0.3 members alike), the interfaces the gate does
// not proxy are gone, and so are its signatures (the rewrite breaks them),
// its security schemes (the gate's credentials apply: X-API-Key or an
// agent's Bearer token), push notifications and the extended card (the
// proxy forwards neither).
func (c *card) rewrite(gateURL string) ([]byte, error) {
	out := make(map[string]any, len(c.members))
	for k, v := range c.members {
		out[k] = v
	}
	for _, k := range []string{"signatures", "securitySchemes", "security_schemes", "securityRequirements", "security_requirements", "security"} {
		delete(out, k)
	}
	if _, ok := c.members["supportedInterfaces"]; ok || c.members["supported_interfaces"] == nil {
		delete(out, "supported_interfaces")
		out["supportedInterfaces"] = []map[string]any{{"url": gateURL, "protocolBinding": "JSONRPC", "protocolVersion": interfaceVersion(c.members)}}
	}
	if _, ok := c.members["supported_interfaces"]; ok {
		out["supported_interfaces"] = []map[string]any{{"url": gateURL, "protocol_binding": "JSONRPC", "protocol_version": interfaceVersion(c.members)}}
	}
	if _, ok := c.members["url"]; ok {
		out["url"] = gateURL
		out["preferredTransport"] = "JSONRPC"
	}
	if _, ok := c.members["additionalInterfaces"]; ok {
		out["additionalInterfaces"] = []map[string]any{{"url": gateURL, "transport": "JSONRPC"}}
	}
	if _, ok := c.members["supportsAuthenticatedExtendedCard"]; ok {
		out["supportsAuthenticatedExtendedCard"] = false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.members["capabilities"], &caps) == nil && caps != nil {
		delete(caps, "pushNotifications")
		delete(caps, "push_notifications")
		delete(caps, "extendedAgentCard")
		delete(caps, "extended_agent_card")
		out["capabilities"] = caps
	}
	return json.Marshal(out)
}

// interfaceVersion is the protocolVersion of the card's JSON-RPC interface
// (A2A 1.0), else its protocolVersion member (A2A 0.3), else "1.0".
func interfaceVersion(m map[string]json.RawMessage) string {
	var vs []struct {
		Version   string `json:"protocolVersion"`
		VersionPB string `json:"protocol_version"`
		agentInterface
	}
	for _, k := range []string{"supportedInterfaces", "supported_interfaces"} {
		if json.Unmarshal(m[k], &vs) == nil {
			for _, v := range vs {
				if v.jsonRPC() {
					if v.Version != "" {
						return v.Version
					}
					if v.VersionPB != "" {
						return v.VersionPB
					}
				}
			}
		}
	}
	var v string
	if json.Unmarshal(m["protocolVersion"], &v) == nil && v != "" {
		return v
	}
	return "1.0"
}
