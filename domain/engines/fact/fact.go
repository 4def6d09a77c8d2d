package fact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// Version is the engine version reported in its capabilities.
const Version = "1.0.0"

// Params are the fact engine's parameters (QWED protocol v1.0 §5.2.4).
type Params struct {
	// Context is the text the claim is checked against (required).
	Context string `json:"context"`
}

// Verdicts of one claim sentence.
const (
	VerdictSupported    = "supported"
	VerdictContradicted = "contradicted"
	VerdictNotSettled   = "not_settled"
)

// Evidence is the context sentence a verdict rests on.
type Evidence struct {
	// Index is the sentence's 0-based position in the context.
	Index    int    `json:"sentence_index"`
	Sentence string `json:"sentence"`
}

// ClaimFacts is what the engine read from a claim sentence.
type ClaimFacts struct {
	Text      string   `json:"text"`
	Entities  []string `json:"entities"`
	Numbers   []string `json:"numbers"`
	Dates     []string `json:"dates"`
	Predicate []string `json:"predicate"`
	Negated   bool     `json:"negated"`
	Hedged    bool     `json:"hedged"`
}

// Part is the verdict on one sentence of the claim.
type Part struct {
	Claim    ClaimFacts `json:"claim"`
	Verdict  string     `json:"verdict"`
	Evidence *Evidence  `json:"evidence,omitempty"`
	// Conflict is the second sentence when the context both supports and
	// contradicts the claim.
	Conflict *Evidence `json:"conflict,omitempty"`
	// Expected is what the context says where it contradicts the claim.
	Expected string `json:"expected,omitempty"`
	// Actual is what the claim says there.
	Actual string `json:"actual,omitempty"`
	Reason string `json:"reason"`
}

// Result is the engine-specific result (QWED protocol v1.0 §6.1 "result"); for
// FAILED, expected and actual are those of the contradicted part (§6.3.2).
type Result struct {
	IsValid   bool      `json:"is_valid"`
	Verdict   string    `json:"verdict"`
	Evidence  *Evidence `json:"evidence,omitempty"`
	Expected  string    `json:"expected,omitempty"`
	Actual    string    `json:"actual,omitempty"`
	Parts     []Part    `json:"parts"`
	Sentences int       `json:"context_sentences"`
	Message   string    `json:"message"`
}

// Proof is the derivation returned when include_proof is set: how the
// context was split into sentences and what the engine read from each
// sentence a verdict rests on, so that the comparison can be re-done by
// hand (entities, numbers, dates, negation and predicate words must agree).
type Proof struct {
	Method string `json:"method"`
	// Sentences is the context split into sentences, by index.
	Sentences []string `json:"context_sentences"`
	// Evidence holds, for each sentence index cited by a part (evidence or
	// conflict), the facts read from that sentence, in index order.
	Evidence []EvidenceFacts `json:"evidence"`
}

// EvidenceFacts is what the engine read from one context sentence.
type EvidenceFacts struct {
	Index int        `json:"sentence_index"`
	Facts ClaimFacts `json:"facts"`
}

// proofMethod names the comparison the fact engine makes.
const proofMethod = "sentence matching: a claim sentence is supported by a context sentence naming the same entities with agreeing numbers, dates, negation and predicate words, and contradicted by one that names them with a conflicting value or polarity"

// proof builds the Proof of res over the analysed context.
func proof(res *Result, sents []string, ctx []analysis) Proof {
	cited := map[int]bool{}
	for _, pt := range res.Parts {
		for _, e := range []*Evidence{pt.Evidence, pt.Conflict} {
			if e != nil && e.Index >= 0 && e.Index < len(ctx) {
				cited[e.Index] = true
			}
		}
	}
	p := Proof{Method: proofMethod, Sentences: sents, Evidence: []EvidenceFacts{}}
	for i := range ctx { // index order: deterministic
		if cited[i] {
			p.Evidence = append(p.Evidence, EvidenceFacts{Index: i, Facts: facts(ctx[i], dedupe(ctx[i].words))})
		}
	}
	return p
}

// Engine is the fact engine; the zero value is ready to use.
type Engine struct{}

// New returns the fact engine.
func New() engines.Engine { return Engine{} }

// Capabilities is the engine's capabilities document (QWED protocol v1.0 §4.2).
func (Engine) Capabilities() engines.Capabilities {
	return engines.Capabilities{
		EngineID: "fact",
		Name:     "Fact Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"method":          "deterministic sentence matching: entities, numbers, dates, negation, predicate words",
			"entities":        true,
			"numbers":         true,
			"dates":           []string{"YYYY-MM-DD", "Month D, YYYY", "D Month YYYY", "Month YYYY"},
			"negation":        true,
			"world_knowledge": false,
			"languages":       []string{"en"},
		},
		InputTypes:  []string{"claim", "context"},
		OutputTypes: []string{"verification_result", "evidence", "proof"},
		Limits: map[string]int{
			"max_query_bytes":     engines.MaxQueryBytes,
			"max_context_bytes":   MaxContextBytes,
			"max_sentences":       MaxSentences,
			"max_sentence_tokens": MaxSentenceTokens,
			"max_claim_sentences": MaxClaimSentences,
		},
		Params: json.RawMessage(`{"type":"object","required":["context"],"additionalProperties":false,"properties":{"context":{"type":"string","minLength":1}}}`),
	}
}

func problem(code, msg string, details map[string]any) engines.Outcome {
	return engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: code, Message: msg, Details: details}}
}

// Verify checks the claim in req.Query against params.context.
func (Engine) Verify(_ context.Context, req engines.Request) engines.Outcome {
	if strings.TrimSpace(req.Query) == "" {
		return problem("QWED-REQ-002", "the query (the claim) is empty", map[string]any{"field": "query"})
	}
	if len(req.Query) > engines.MaxQueryBytes {
		return problem("QWED-REQ-004", "the query is too long", map[string]any{"length": len(req.Query), "limit": engines.MaxQueryBytes})
	}
	raw := bytes.TrimSpace(req.Params)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return problem("QWED-REQ-002", "params.context is required", map[string]any{"field": "params.context"})
	}
	if len(raw) > 2*MaxContextBytes+64 {
		return problem("QWED-REQ-004", "params.context is too long", map[string]any{"limit": MaxContextBytes})
	}
	var p Params
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return problem("QWED-REQ-001", fmt.Sprintf("decoding params: %v", err), map[string]any{"field": "params"})
	}
	if dec.More() {
		return problem("QWED-REQ-001", "decoding params: trailing data after the object", map[string]any{"field": "params"})
	}
	if strings.TrimSpace(p.Context) == "" {
		return problem("QWED-REQ-002", "params.context is required", map[string]any{"field": "params.context"})
	}
	if len(p.Context) > MaxContextBytes {
		return problem("QWED-REQ-004", "params.context is too long", map[string]any{"length": len(p.Context), "limit": MaxContextBytes})
	}
	ctxSents := splitSentences(p.Context)
	if len(ctxSents) > MaxSentences {
		return problem("QWED-REQ-004", "params.context has too many sentences", map[string]any{"sentences": len(ctxSents), "limit": MaxSentences})
	}
	claimSents := splitSentences(req.Query)
	if len(claimSents) > MaxClaimSentences {
		return problem("QWED-REQ-004", "the claim has too many sentences", map[string]any{"sentences": len(claimSents), "limit": MaxClaimSentences})
	}
	ctxToks := make([][]token, len(ctxSents))
	claimToks := make([][]token, len(claimSents))
	lowerSeen := map[string]bool{}
	for _, group := range []struct {
		sents []string
		toks  [][]token
		field string
	}{{ctxSents, ctxToks, "params.context"}, {claimSents, claimToks, "query"}} {
		for i, s := range group.sents {
			ts := tokenize(s)
			if len(ts) > MaxSentenceTokens {
				return problem("QWED-REQ-004", "a sentence is too long", map[string]any{"field": group.field, "sentence_index": i, "tokens": len(ts), "limit": MaxSentenceTokens})
			}
			group.toks[i] = ts
			for _, t := range ts {
				if t.kind == kWord && !t.cap {
					lowerSeen[t.lower] = true
				}
			}
		}
	}
	ctx := make([]analysis, len(ctxSents))
	subject := []string(nil)
	for i, s := range ctxSents {
		a := analyse(s, ctxToks[i], lowerSeen)
		if a.pronoun && subject != nil {
			a.entities = append(a.entities, subject)
		}
		switch {
		case a.own > 0:
			subject = a.entities[0]
		case !a.pronoun:
			subject = nil
		}
		for _, d := range a.dates { // a date's year is also a year number
			if d.Y != 0 {
				a.numbers = append(a.numbers, yearNumber(d.Y))
			}
		}
		ctx[i] = a
	}
	res := Result{Parts: make([]Part, 0, len(claimSents)), Sentences: len(ctxSents)}
	failed, unsettled := -1, -1
	for i, s := range claimSents {
		part := judge(analyse(s, claimToks[i], lowerSeen), ctx)
		res.Parts = append(res.Parts, part)
		switch part.Verdict {
		case VerdictContradicted:
			if failed < 0 {
				failed = i
			}
		case VerdictNotSettled:
			if unsettled < 0 {
				unsettled = i
			}
		}
	}
	var out engines.Outcome
	switch {
	case failed >= 0:
		pt := res.Parts[failed]
		res.Verdict, res.Evidence, res.Expected, res.Actual = VerdictContradicted, pt.Evidence, pt.Expected, pt.Actual
		res.Message = "the context contradicts the claim: " + pt.Reason
		out = engines.Outcome{Status: engines.Failed}
	case unsettled >= 0:
		pt := res.Parts[unsettled]
		res.Verdict = VerdictNotSettled
		res.Message = "the context does not settle it: " + pt.Reason
		out = engines.Outcome{Status: engines.Unsupported, Err: &engines.Problem{Code: "QWED-REQ-005", Message: res.Message}}
	default:
		res.IsValid, res.Verdict, res.Evidence = true, VerdictSupported, res.Parts[0].Evidence
		res.Message = "the context supports the claim: " + res.Parts[0].Reason
		out = engines.Outcome{Status: engines.Verified}
	}
	out.Result = res
	if req.IncludeProof {
		out.Proof = proof(&res, ctxSents, ctx)
	}
	return out
}
