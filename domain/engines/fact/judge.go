package fact

import (
	"fmt"
	"math/big"
	"strings"
)

func yearNumber(y int) Number {
	return Number{Value: big.NewRat(int64(y), 1), Text: fmt.Sprint(y)}
}

func entityMatches(claim, sent []string) bool {
	if len(claim) == 0 || len(claim) > len(sent) {
		return false
	}
outer:
	for i := 0; i+len(claim) <= len(sent); i++ {
		for k, w := range claim {
			if sent[i+k] != w {
				continue outer
			}
		}
		return true
	}
	return false
}

func numberMatches(c, s Number) bool {
	return c.Value.Cmp(s.Value) == 0 && c.Approx == s.Approx && (c.Unit == "" || c.Unit == s.Unit)
}

func facts(c analysis, predicate []string) ClaimFacts {
	f := ClaimFacts{Text: c.text, Entities: []string{}, Numbers: []string{}, Dates: []string{}, Predicate: predicate, Negated: c.negated, Hedged: c.hedged}
	for _, e := range c.entities {
		f.Entities = append(f.Entities, strings.Join(e, " "))
	}
	for _, n := range c.numbers {
		f.Numbers = append(f.Numbers, n.String())
	}
	for _, d := range c.dates {
		f.Dates = append(f.Dates, d.String())
	}
	if f.Predicate == nil {
		f.Predicate = []string{}
	}
	return f
}

func polarity(negated bool) string {
	if negated {
		return "negated"
	}
	return "affirmed"
}

// judge decides one claim sentence against the context sentences.
func judge(c analysis, ctx []analysis) Part {
	predicate := dedupe(c.words)
	if len(predicate) == 0 {
		predicate = dedupe(c.preps)
	}
	part := Part{Claim: facts(c, predicate), Verdict: VerdictNotSettled}
	switch {
	case c.question:
		part.Reason = "the claim is a question"
		return part
	case len(c.entities)+len(c.numbers)+len(c.dates) == 0:
		part.Reason = "the claim names no entity, number or date to check; word overlap alone never verifies"
		return part
	case len(predicate) == 0 && len(c.numbers)+len(c.dates) == 0:
		part.Reason = "the claim states no relation to check between its entities"
		return part
	}
	var support, contra *Evidence
	bestMissing := ""
	for i, s := range ctx {
		entOK := true
		for _, e := range c.entities {
			found := false
			for _, f := range s.entities {
				if entityMatches(e, f) {
					found = true
					break
				}
			}
			if !found {
				entOK = false
				break
			}
		}
		if !entOK {
			continue
		}
		var missingWords []string
		for _, w := range predicate {
			if !s.lemmas[w] {
				missingWords = append(missingWords, w)
			}
		}
		if len(missingWords) > 0 {
			if bestMissing == "" {
				bestMissing = fmt.Sprintf("sentence %d names the same entities but not %q", i, strings.Join(missingWords, " "))
			}
			continue
		}
		allMatched := true
		var conflictExp, conflictAct, missingVal string
		for _, n := range c.numbers {
			matched := false
			for _, sn := range s.numbers {
				if numberMatches(n, sn) {
					matched = true
					break
				}
			}
			if matched {
				continue
			}
			allMatched = false
			if missingVal == "" {
				missingVal = n.String()
			}
			if n.Approx != "" || conflictExp != "" {
				continue
			}
			for _, sn := range s.numbers {
				if sn.Unit == n.Unit && sn.Approx == "" {
					conflictExp, conflictAct = sn.String(), n.String()
					break
				}
			}
		}
		for _, d := range c.dates {
			matched := false
			for _, sd := range s.dates {
				if sd.covers(d) {
					matched = true
					break
				}
			}
			if matched {
				continue
			}
			allMatched = false
			if missingVal == "" {
				missingVal = d.String()
			}
			if conflictExp != "" {
				continue
			}
			for _, sd := range s.dates {
				if sd.conflicts(d) {
					conflictExp, conflictAct = sd.String(), d.String()
					break
				}
			}
		}
		ev := &Evidence{Index: i, Sentence: s.text}
		plain := !s.question && !s.hedged && !c.hedged
		switch {
		case allMatched && !s.question && s.negated == c.negated && s.hedged == c.hedged:
			if support == nil {
				support = ev
			}
		case plain && allMatched && s.negated != c.negated:
			if contra == nil {
				contra = ev
				part.Expected, part.Actual = polarity(s.negated), polarity(c.negated)
				part.Reason = fmt.Sprintf("sentence %d states the same fact %s, the claim %s", i, polarity(s.negated), polarity(c.negated))
			}
		case plain && !s.negated && !c.negated && conflictExp != "":
			if contra == nil {
				contra = ev
				part.Expected, part.Actual = conflictExp, conflictAct
				part.Reason = fmt.Sprintf("sentence %d gives %s where the claim says %s", i, conflictExp, conflictAct)
			}
		default:
			if bestMissing == "" {
				switch {
				case s.question:
					bestMissing = fmt.Sprintf("sentence %d is a question", i)
				case s.hedged || c.hedged:
					bestMissing = fmt.Sprintf("sentence %d and the claim differ in certainty (may, might, reportedly, ...)", i)
				case missingVal != "":
					bestMissing = fmt.Sprintf("sentence %d does not state %s", i, missingVal)
				default:
					bestMissing = fmt.Sprintf("sentence %d differs in negation", i)
				}
			}
		}
	}
	switch {
	case support != nil && contra != nil:
		part.Evidence, part.Conflict = support, contra
		part.Expected, part.Actual = "", ""
		part.Reason = fmt.Sprintf("the context both supports (sentence %d) and contradicts (sentence %d) the claim", support.Index, contra.Index)
	case support != nil:
		part.Verdict, part.Evidence = VerdictSupported, support
		part.Reason = fmt.Sprintf("sentence %d states the claim's entities, numbers, dates and words with the same negation", support.Index)
	case contra != nil:
		part.Verdict, part.Evidence = VerdictContradicted, contra
	case bestMissing != "":
		part.Reason = bestMissing
	default:
		part.Reason = "no context sentence names all of " + describeAnchors(part.Claim)
	}
	return part
}

func describeAnchors(f ClaimFacts) string {
	var all []string
	all = append(all, f.Entities...)
	all = append(all, f.Numbers...)
	all = append(all, f.Dates...)
	return strings.Join(all, ", ")
}

func dedupe(ws []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
