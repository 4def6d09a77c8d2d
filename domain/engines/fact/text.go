package fact

import (
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the fact engine (each has a test on both sides).
const (
	// MaxContextBytes is the longest params.context.
	MaxContextBytes = 200_000
	// MaxSentences is the most sentences of the context.
	MaxSentences = 5_000
	// MaxSentenceTokens is the most tokens of one sentence.
	MaxSentenceTokens = 1_000
	// MaxClaimSentences is the most sentences of the claim.
	MaxClaimSentences = 16
	// maxNumberChars bounds a number's text.
	maxNumberChars = 40
)

// token kinds
const (
	kWord = iota
	kNum
	kPunct
	kISODate
)

type token struct {
	kind  int
	text  string
	lower string
	cap   bool // a word starting with an upper-case letter
	neg   bool // a word ending in n't
	cur   string
	pct   bool
}

// splitSentences splits text at . ! ? followed by space and an upper-case
// letter, a digit, a quote or the end (not after an abbreviation, an
// initial or inside a number), and at blank lines.
func splitSentences(text string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\n' {
			j := i + 1
			for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
				j++
			}
			if j < len(text) && text[j] == '\n' {
				emit(i)
			}
			continue
		}
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(text) && (text[j] == '"' || text[j] == '\'' || text[j] == ')') {
			j++
		}
		if j < len(text) && !isSpace(text[j]) {
			continue
		}
		k := j
		for k < len(text) && isSpace(text[k]) {
			k++
		}
		if k < len(text) {
			r, _ := utf8.DecodeRuneInString(text[k:])
			if !(unicode.IsUpper(r) || unicode.IsDigit(r) || r == '"' || r == '\'' || r == '(') {
				continue
			}
		}
		if c == '.' && abbreviationBefore(text, i) {
			continue
		}
		emit(j)
	}
	emit(len(text))
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

var abbreviations = set("mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "inc", "ltd", "co", "corp", "vs",
	"etc", "e.g", "i.e", "u.s", "u.k", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
	"oct", "nov", "dec", "no", "gen", "col", "lt", "mt", "ft", "approx", "est", "fig")

// abbreviationBefore reports whether the word ending at the '.' at i is an
// abbreviation or an initial.
func abbreviationBefore(text string, i int) bool {
	j := i
	for j > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:j])
		if unicode.IsLetter(r) || r == '.' {
			j -= size
			continue
		}
		break
	}
	w := strings.ToLower(text[j:i])
	if w == "" {
		return false
	}
	if utf8.RuneCountInString(w) == 1 {
		r, _ := utf8.DecodeRuneInString(text[j:])
		return unicode.IsUpper(r)
	}
	return abbreviations[w]
}

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

var currencySymbols = map[rune]string{'$': "USD", '€': "EUR", '£': "GBP", '¥': "JPY"}

// tokenize splits one sentence into words, numbers (with a currency symbol
// before and a percent sign after), ISO dates and punctuation.
func tokenize(s string) []token {
	var out []token
	i := 0
	cur := ""
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case currencySymbols[r] != "":
			cur = currencySymbols[r]
			i += size
			continue
		case r >= '0' && r <= '9':
			if iso := isoDateAt(s, i); iso != "" {
				out = append(out, token{kind: kISODate, text: iso, lower: iso})
				i += len(iso)
				break
			}
			j := i
			for j < len(s) {
				c := s[j]
				if c >= '0' && c <= '9' {
					j++
					continue
				}
				if (c == ',' || c == '.') && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' {
					j++
					continue
				}
				break
			}
			t := token{kind: kNum, text: s[i:j], cur: cur}
			if j < len(s) && s[j] == '%' {
				t.pct = true
				j++
			}
			// ordinal suffix: 5th, 1st, 2nd, 3rd
			for _, suf := range []string{"st", "nd", "rd", "th"} {
				if strings.HasPrefix(strings.ToLower(s[j:]), suf) && (j+2 == len(s) || !isLetterAt(s, j+2)) {
					j += 2
					break
				}
			}
			out = append(out, t)
			i = j
		case unicode.IsLetter(r):
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) {
					j += sz
					continue
				}
				if (r2 == '\'' || r2 == '’' || r2 == '-' || r2 == '.') && j+sz < len(s) && isLetterAt(s, j+sz) {
					if r2 == '.' && !(j+sz+1 < len(s) && s[j+sz+1] == '.') {
						break // only U.S.-style dotted abbreviations
					}
					j += sz
					continue
				}
				break
			}
			w := strings.ReplaceAll(s[i:j], "’", "'")
			t := token{kind: kWord, text: w, lower: strings.ToLower(w)}
			t.cap = unicode.IsUpper(r)
			if strings.HasSuffix(t.lower, "n't") {
				t.neg = true
				t.lower = strings.TrimSuffix(t.lower, "n't")
				switch t.lower {
				case "ca":
					t.lower = "can"
				case "wo":
					t.lower = "will"
				}
			}
			t.lower = strings.TrimSuffix(t.lower, "'s")
			out = append(out, t)
			i = j
		default:
			out = append(out, token{kind: kPunct, text: string(r), lower: string(r)})
			i += size
		}
		cur = ""
	}
	return out
}

func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

// isoDateAt returns the YYYY-MM-DD date starting at i, or "".
func isoDateAt(s string, i int) string {
	if i+10 > len(s) {
		return ""
	}
	d := s[i : i+10]
	for k, c := range []byte(d) {
		if k == 4 || k == 7 {
			if c != '-' {
				return ""
			}
			continue
		}
		if c < '0' || c > '9' {
			return ""
		}
	}
	if i+10 < len(s) && s[i+10] >= '0' && s[i+10] <= '9' {
		return ""
	}
	m := int(d[5]-'0')*10 + int(d[6]-'0')
	day := int(d[8]-'0')*10 + int(d[9]-'0')
	if m < 1 || m > 12 || day < 1 || day > 31 {
		return ""
	}
	return d
}

// parseNumber reads "1,234.5" exactly; commas must group thousands.
func parseNumber(text string) (*big.Rat, bool) {
	if len(text) > maxNumberChars {
		return nil, false
	}
	intPart, frac, _ := strings.Cut(text, ".")
	if strings.Contains(frac, ",") || strings.Contains(frac, ".") {
		return nil, false
	}
	if strings.Contains(intPart, ",") {
		groups := strings.Split(intPart, ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return nil, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return nil, false
			}
		}
		intPart = strings.Join(groups, "")
	}
	r, ok := new(big.Rat).SetString(intPart + "." + frac + "0")
	return r, ok
}
