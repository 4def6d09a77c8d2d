package code

import (
	"sort"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// The severities of a finding, in decreasing order.
const (
	SevCritical = "critical"
	SevHigh     = "high"
	SevMedium   = "medium"
	SevLow      = "low"
	SevInfo     = "info"
)

// severityRank orders severities: critical 4 … info 0; an unknown one
// ranks as critical (fail closed).
func severityRank(s string) int {
	switch s {
	case SevInfo:
		return 0
	case SevLow:
		return 1
	case SevMedium:
		return 2
	case SevHigh:
		return 3
	}
	return 4
}

// blocking reports whether a severity blocks (critical or high).
func blocking(s string) bool { return severityRank(s) >= 3 }

// Rule is one rule of the catalogue: its id, default severity, class and
// what it finds.
type Rule struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Class    string `json:"class"` // execution, process, native, deserialization, file, network, obfuscation, import, environment, quality, destructive, permission
	Title    string `json:"title"`
}

// rules is the catalogue, keyed by id. A finding may carry a higher
// severity than its rule's default (e.g. rmtree of "/").
var rules = map[string]Rule{}

func rule(id, sev, class, title string) string {
	rules[id] = Rule{ID: id, Severity: sev, Class: class, Title: title}
	return id
}

// Rules returns the rule catalogue in id order.
func Rules() []Rule {
	out := make([]Rule, 0, len(rules))
	for _, id := range sortedKeys(rules) {
		out = append(out, rules[id])
	}
	return out
}

// reporter collects findings: deduplicated by (rule, position, message),
// bounded by MaxFindings, sorted by position then rule.
type reporter struct {
	src      string
	seen     map[string]bool
	findings []engines.Finding
	omitted  int
	blocking int // blocking findings seen (before deduplication)
	// prefix and at relocate findings of nested code (a payload passed to
	// exec) onto the outer node that executes it.
	prefix string
	at     *node
}

func newReporter(src string) *reporter {
	return &reporter{src: src, seen: map[string]bool{}}
}

// add reports rule at n with the rule's severity.
func (r *reporter) add(id string, n *node, msg string) {
	r.addSev(id, rules[id].Severity, n, msg)
}

// addSev reports rule at n with an explicit severity.
func (r *reporter) addSev(id, sev string, n *node, msg string) {
	src := r.src
	pos := n
	if r.at != nil {
		pos = r.at
		msg = r.prefix + msg
	}
	f := engines.Finding{
		Rule: id, Severity: sev, Message: msg,
		Line: pos.row + 1, Column: columnOf(src, pos.start),
		Snippet: snippet(pos.text(src)),
	}
	if blocking(sev) {
		r.blocking++
	}
	key := f.Rule + "\x00" + f.Severity + "\x00" + f.Message + "\x00" + itoa(f.Line) + ":" + itoa(f.Column)
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	if len(r.findings) >= MaxFindings {
		r.omitted++
		return
	}
	r.findings = append(r.findings, f)
}

// sorted returns the findings ordered by line, column, rule, message.
func (r *reporter) sorted() []engines.Finding {
	out := append([]engines.Finding(nil), r.findings...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
	return out
}

// snippet is the first line of a node's text, trimmed and bounded.
func snippet(s string) string {
	return truncate(strings.TrimSpace(firstLine(s)), MaxSnippetBytes)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}
