package fact

import (
	"fmt"
	"math/big"
	"strings"
)

// Number is a quantity stated in a sentence.
type Number struct {
	Value  *big.Rat
	Unit   string // "", "percent", "USD", "m", or the lemma of the noun after it
	Approx string // a qualifier before it: about, over, nearly, ... ("" exact)
	Text   string
}

func (n Number) String() string {
	s := n.Value.FloatString(6)
	if n.Value.IsInt() {
		s = n.Value.Num().String()
	} else {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if n.Approx != "" {
		s = n.Approx + " " + s
	}
	if n.Unit != "" {
		s += " " + n.Unit
	}
	return s
}

// Date is a calendar date; a zero field is not stated.
type Date struct{ Y, M, D int }

func (d Date) String() string {
	switch {
	case d.Y != 0 && d.M != 0 && d.D != 0:
		return fmt.Sprintf("%04d-%02d-%02d", d.Y, d.M, d.D)
	case d.Y != 0 && d.M != 0:
		return fmt.Sprintf("%04d-%02d", d.Y, d.M)
	case d.M != 0 && d.D != 0:
		return fmt.Sprintf("--%02d-%02d", d.M, d.D)
	}
	return fmt.Sprintf("%04d", d.Y)
}

// covers reports whether d states everything c states, equally.
func (d Date) covers(c Date) bool {
	return (c.Y == 0 || c.Y == d.Y) && (c.M == 0 || c.M == d.M) && (c.D == 0 || c.D == d.D)
}

// conflicts reports whether d states every field c states and one differs.
func (d Date) conflicts(c Date) bool {
	if (c.Y != 0 && d.Y == 0) || (c.M != 0 && d.M == 0) || (c.D != 0 && d.D == 0) {
		return false
	}
	return !d.covers(c)
}

// analysis is what the engine reads from one sentence.
type analysis struct {
	text     string
	entities [][]string // normalised token sequences, in order
	own      int        // entities[:own] are the sentence's own; the rest inherited
	numbers  []Number
	dates    []Date
	lemmas   map[string]bool
	words    []string // predicate lemmas (content words), in order
	preps    []string // relation prepositions, in order
	negated  bool
	hedged   bool
	question bool
	pronoun  bool // begins with a pronoun (inherits the previous subject)
}

var (
	months = map[string]int{
		"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
		"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
		"oct": 10, "nov": 11, "dec": 12,
	}
	negationCues = set("not", "no", "never", "neither", "nor", "none", "nobody", "nothing", "nowhere", "cannot")
	hedgeCues    = set("may", "might", "could", "possibly", "perhaps", "reportedly", "allegedly", "rumored",
		"rumoured", "probably", "likely", "unlikely", "supposedly", "if", "whether", "unless", "maybe", "believed", "claimed",
		"said", "says", "according", "stated")
	approxWords  = set("about", "around", "approximately", "roughly", "nearly", "almost", "over", "under", "some", "circa", "up")
	scaleWords   = map[string]int64{"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "trillion": 1_000_000_000_000}
	pronouns     = set("it", "its", "they", "their", "he", "his", "she", "her", "this", "these", "there")
	prepositions = set("in", "on", "at", "from", "of", "to", "by", "with", "near", "between", "before", "after",
		"during", "since", "into", "within", "outside", "inside")
	connectors = set("of", "de", "du", "la", "le", "van", "von", "der", "del", "da", "and")
	stopwords  = set("a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "has", "have",
		"had", "do", "does", "did", "will", "would", "shall", "should", "can", "must", "it", "its", "they",
		"them", "their", "he", "him", "his", "she", "her", "we", "us", "our", "you", "your", "i", "me", "my",
		"this", "that", "these", "those", "which", "who", "whom", "whose", "what", "where", "when", "there",
		"here", "as", "and", "or", "but", "so", "than", "then", "also", "very", "about", "over", "under",
		"any", "each", "every", "some", "such", "both", "either", "one", "ones", "whose", "because", "while",
		"known", "called", "named", "only", "just", "still", "too", "well")
	unitNames = map[string]string{
		"percent": "percent", "per": "", "usd": "USD", "dollar": "USD", "dollars": "USD", "eur": "EUR",
		"euro": "EUR", "euros": "EUR", "gbp": "GBP", "jpy": "JPY", "yen": "JPY",
		"m": "m", "metre": "m", "metres": "m", "meter": "m", "meters": "m",
		"km": "km", "kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km",
		"kg": "kg", "kilogram": "kg", "kilograms": "kg", "ft": "ft", "foot": "ft", "feet": "ft",
		"mi": "mile", "mile": "mile", "miles": "mile", "cm": "cm", "mm": "mm", "g": "g",
	}
	irregular = map[string]string{
		"is": "be", "are": "be", "was": "be", "were": "be", "been": "be", "being": "be", "am": "be",
		"has": "have", "had": "have", "does": "do", "did": "do", "done": "do", "went": "go", "gone": "go",
		"won": "win", "built": "build", "made": "make", "born": "bear", "bore": "bear", "founded": "found",
		"known": "know", "knew": "know", "wrote": "write", "written": "write", "began": "begin", "begun": "begin",
		"became": "become", "lost": "lose", "held": "hold", "led": "lead", "left": "leave", "sold": "sell",
		"bought": "buy", "paid": "pay", "ran": "run", "grew": "grow", "grown": "grow", "took": "take",
		"taken": "take", "gave": "give", "given": "give", "saw": "see", "seen": "see", "found": "find",
		"children": "child", "people": "person", "men": "man", "women": "woman", "largest": "large",
		"largest's": "large", "biggest": "big", "tallest": "tall", "highest": "high", "oldest": "old",
	}
)

// lemma reduces a lower-case word to a crude stem so that inflections of
// one word compare equal (capitals/capital, located/locate, cities/city).
func lemma(w string) string {
	if l, ok := irregular[w]; ok {
		return l
	}
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = w[:n-2]
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "zes")):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	n = len(w)
	if n > 3 && w[n-1] == w[n-2] && strings.IndexByte("bdgkmnprt", w[n-1]) >= 0 {
		w = w[:n-1]
	}
	if n := len(w); n > 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

// analyse reads entities, numbers, dates, cues and predicate words from a
// sentence. lowerSeen holds every word the whole input writes in lower
// case (a capitalised sentence-initial word seen lower-case elsewhere is
// not an entity).
func analyse(text string, toks []token, lowerSeen map[string]bool) analysis {
	a := analysis{text: text, lemmas: map[string]bool{}}
	used := make([]bool, len(toks))
	a.question = strings.HasSuffix(strings.TrimRight(text, `"')`), "?")
	firstWord := -1
	for i, t := range toks {
		if t.kind == kWord {
			firstWord = i
			break
		}
	}
	if firstWord >= 0 && pronouns[toks[firstWord].lower] {
		a.pronoun = true
	}
	isMonth := func(i int) (int, bool) {
		if i < 0 || i >= len(toks) || toks[i].kind != kWord || !toks[i].cap {
			return 0, false
		}
		m, ok := months[toks[i].lower]
		return m, ok
	}
	smallInt := func(i, lo, hi int) (int, bool) {
		if i < 0 || i >= len(toks) || toks[i].kind != kNum || used[i] || toks[i].cur != "" || toks[i].pct {
			return 0, false
		}
		v := 0
		for _, c := range toks[i].text {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
			if v > hi {
				return 0, false
			}
		}
		return v, v >= lo
	}
	year := func(i int) (int, bool) { return smallInt(i, 1000, 2999) }
	day := func(i int) (int, bool) { return smallInt(i, 1, 31) }
	comma := func(i int) int {
		if i < len(toks) && toks[i].kind == kPunct && toks[i].text == "," {
			return i + 1
		}
		return i
	}
	// Dates.
	for i, t := range toks {
		if used[i] {
			continue
		}
		if t.kind == kISODate {
			var d Date
			fmt.Sscanf(t.text, "%d-%d-%d", &d.Y, &d.M, &d.D)
			a.dates = append(a.dates, d)
			used[i] = true
			continue
		}
		m, ok := isMonth(i)
		if !ok {
			continue
		}
		j := i + 1
		if j < len(toks) && toks[j].kind == kPunct && toks[j].text == "." {
			j++
		}
		if dd, ok := day(j); ok { // March 5, 2024 | March 5
			k := comma(j + 1)
			if y, ok := year(k); ok {
				a.dates = append(a.dates, Date{Y: y, M: m, D: dd})
				markUsed(used, i, k)
				continue
			}
			a.dates = append(a.dates, Date{M: m, D: dd})
			markUsed(used, i, j)
			continue
		}
		if dd, ok := day(i - 1); ok && !used[i-1] { // 5 March 2024 | 5 March
			if y, ok := year(j); ok {
				a.dates = append(a.dates, Date{Y: y, M: m, D: dd})
				markUsed(used, i-1, j)
				continue
			}
			a.dates = append(a.dates, Date{M: m, D: dd})
			markUsed(used, i-1, i)
			continue
		}
		if y, ok := year(comma(j)); ok { // March 2024
			a.dates = append(a.dates, Date{Y: y, M: m})
			markUsed(used, i, comma(j))
			continue
		}
		if toks[i].lower != "may" { // a bare month name
			used[i] = true
		}
	}
	// Numbers.
	for i, t := range toks {
		if used[i] || t.kind != kNum {
			continue
		}
		v, ok := parseNumber(t.text)
		if !ok {
			continue
		}
		used[i] = true
		n := Number{Value: v, Text: t.text, Unit: t.cur}
		if t.pct {
			n.Unit = "percent"
		}
		j := i + 1
		if j < len(toks) && toks[j].kind == kWord {
			if s, ok := scaleWords[toks[j].lower]; ok {
				n.Value = new(big.Rat).Mul(v, big.NewRat(s, 1))
				used[j] = true
				j++
			}
		}
		if n.Unit == "" && j < len(toks) && toks[j].kind == kWord && !used[j] {
			w := toks[j].lower
			switch u, ok := unitNames[w]; {
			case w == "per" && j+1 < len(toks) && toks[j+1].lower == "cent":
				n.Unit = "percent"
				used[j], used[j+1] = true, true
			case ok && u != "":
				n.Unit = u
				used[j] = true
			case !toks[j].cap && !stopwords[w] && !prepositions[w] && !negationCues[w] && !hedgeCues[w]:
				n.Unit = lemma(w)
				used[j] = true
			}
		} else if n.Unit != "" && j < len(toks) && toks[j].kind == kWord {
			if u, ok := unitNames[toks[j].lower]; ok && u == n.Unit {
				used[j] = true // "$5 USD"
			}
		}
		if i > 0 && toks[i-1].kind == kWord && approxWords[toks[i-1].lower] {
			n.Approx = toks[i-1].lower
			used[i-1] = true
		} else if i > 1 && toks[i-1].kind == kWord && toks[i-1].lower == "than" && (toks[i-2].lower == "more" || toks[i-2].lower == "less" || toks[i-2].lower == "fewer") {
			n.Approx = toks[i-2].lower + " than"
			used[i-1], used[i-2] = true, true
		} else if i > 1 && toks[i-2].kind == kWord && toks[i-1].kind == kWord && toks[i-2].lower == "at" && (toks[i-1].lower == "least" || toks[i-1].lower == "most") {
			n.Approx = "at " + toks[i-1].lower
			used[i-1], used[i-2] = true, true
		}
		a.numbers = append(a.numbers, n)
	}
	// Entities: runs of capitalised words, joined by connectors.
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if used[i] || t.kind != kWord || !t.cap || !entityWord(t, i == firstWord, lowerSeen) {
			continue
		}
		var span []string
		j := i
		for j < len(toks) {
			tj := toks[j]
			if !used[j] && tj.kind == kWord && tj.cap {
				span = append(span, tj.lower)
				used[j] = true
				j++
				continue
			}
			if tj.kind == kWord && !tj.cap && connectors[tj.lower] && j+1 < len(toks) && toks[j+1].kind == kWord && toks[j+1].cap && !used[j+1] && !stopwords[toks[j+1].lower] {
				span = append(span, tj.lower)
				used[j] = true
				j++
				continue
			}
			break
		}
		if len(span) > 0 && span[0] == "the" {
			span = span[1:]
		}
		if len(span) > 0 {
			a.entities = append(a.entities, span)
		}
		i = j - 1
	}
	a.own = len(a.entities)
	// Cues and predicate words.
	for i, t := range toks {
		if t.neg {
			a.negated = true
		}
		if t.kind != kWord || used[i] {
			continue
		}
		w := t.lower
		switch {
		case negationCues[w]:
			a.negated = true
		case hedgeCues[w]:
			a.hedged = true
		case prepositions[w]:
			a.preps = append(a.preps, w)
		case stopwords[w]:
		default:
			l := lemma(w)
			a.lemmas[l] = true
			a.words = append(a.words, l)
		}
		if prepositions[w] || stopwords[w] {
			a.lemmas[w] = true
		}
	}
	return a
}

func markUsed(used []bool, from, to int) {
	for k := from; k <= to && k < len(used); k++ {
		used[k] = true
	}
}

// entityWord decides whether a capitalised word may start an entity: a
// sentence-initial word only when it is no function word, cue or pronoun
// and the input never writes it in lower case.
func entityWord(t token, initial bool, lowerSeen map[string]bool) bool {
	if stopwords[t.lower] || negationCues[t.lower] || hedgeCues[t.lower] || pronouns[t.lower] || prepositions[t.lower] {
		return false
	}
	if initial && lowerSeen[t.lower] {
		return false
	}
	return true
}
