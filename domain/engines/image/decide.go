package image

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

const (
	verdictHolds       = "holds"
	verdictFalse       = "false"
	verdictUnsupported = "unsupported"
)

func decide(h Header, clauses []clause) engines.Outcome {
	res := Result{Format: h.Format, Width: h.Width, Height: h.Height, SizeBytes: h.SizeBytes, Checks: []Check{}}
	failed, unsupported := 0, 0
	var firstUnsupported string
	for _, c := range clauses {
		if c.reason != "" {
			unsupported++
			if firstUnsupported == "" {
				firstUnsupported = c.reason
			}
			res.Checks = append(res.Checks, Check{Clause: c.text, Verdict: verdictUnsupported, Reason: c.reason})
			continue
		}
		for _, a := range c.atoms {
			ch := evaluate(h, a)
			ch.Clause = c.text
			switch ch.Verdict {
			case verdictFalse:
				if failed == 0 {
					res.Expected, res.Actual = ch.Measured, ch.Claimed
				}
				failed++
			case verdictUnsupported:
				unsupported++
				if firstUnsupported == "" {
					firstUnsupported = ch.Reason
				}
			}
			res.Checks = append(res.Checks, ch)
		}
	}
	switch {
	case failed > 0:
		res.Message = fmt.Sprintf("the image is a %s of %dx%d, %d bytes: %d of %d checks are false", h.Format, h.Width, h.Height, h.SizeBytes, failed, len(res.Checks))
		return engines.Outcome{Status: engines.Failed, Result: res}
	case unsupported > 0:
		res.Message = "the claim is not decidable from the image header: " + firstUnsupported
		return engines.Outcome{Status: engines.Unsupported, Result: res, Err: &engines.Problem{Code: "QWED-REQ-005", Message: res.Message}}
	}
	res.IsValid = true
	res.Message = fmt.Sprintf("the image is a %s of %dx%d, %d bytes: every check holds", h.Format, h.Width, h.Height, h.SizeBytes)
	return engines.Outcome{Status: engines.Verified, Result: res}
}

func evaluate(h Header, a atom) Check {
	ch := Check{Property: a.property, Operator: a.op, Claimed: a.val.text}
	holds := false
	switch a.property {
	case "format":
		ch.Measured, ch.Claimed = h.Format, a.val.format
		holds = a.val.format == h.Format
		if a.op == "!=" {
			holds = !holds
		}
	case "dimensions":
		ch.Measured = fmt.Sprintf("%dx%d", h.Width, h.Height)
		w, okw := exactInt(a.val.a)
		ht, okh := exactInt(a.val.b)
		ch.Claimed = a.val.a + "x" + a.val.b
		holds = okw && okh && w == int64(h.Width) && ht == int64(h.Height)
		if a.op == "!=" {
			holds = !holds
		}
	case "orientation":
		ch.Measured = orientation(h)
		holds = ch.Measured == a.val.text
		if a.op == "!=" {
			holds = !holds
		}
	case "width", "height", "pixels":
		m := int64(h.Width)
		switch a.property {
		case "height":
			m = int64(h.Height)
		case "pixels":
			m = int64(h.Width) * int64(h.Height)
		}
		ch.Measured = strconv.FormatInt(m, 10)
		holds = compare(new(big.Rat).SetInt64(m), a.op, a.val.a)
	case "size":
		scale := int64(1)
		if a.val.unit != "" {
			scale = byteUnits[a.val.unit]
		}
		ch.Measured = strconv.Itoa(h.SizeBytes) + " bytes"
		holds = compare(big.NewRat(int64(h.SizeBytes), scale), a.op, a.val.a)
	case "aspect_ratio":
		r := big.NewRat(int64(h.Width), int64(h.Height))
		ch.Measured = r.Num().String() + ":" + r.Denom().String()
		if a.val.kind == "ratio" {
			x, okx := parseDecimal(a.val.a)
			y, oky := parseDecimal(a.val.b)
			if !okx || !oky || y.Sign() == 0 {
				ch.Verdict, ch.Reason = verdictUnsupported, fmt.Sprintf("%q is not a ratio", a.val.text)
				return ch
			}
			holds = compareExact(r, a.op, new(big.Rat).Quo(x, y))
		} else {
			holds = compare(r, a.op, a.val.a)
		}
	}
	ch.Verdict = verdictFalse
	if holds {
		ch.Verdict = verdictHolds
	}
	return ch
}

func orientation(h Header) string {
	switch {
	case h.Width > h.Height:
		return "landscape"
	case h.Width < h.Height:
		return "portrait"
	}
	return "square"
}

func exactInt(s string) (int64, bool) {
	if strings.Contains(s, ".") {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseDecimal parses the lexer's decimal text (digits, optional fraction).
func parseDecimal(s string) (*big.Rat, bool) {
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// compare decides "x op claimed" where claimed is decimal text: equality
// holds when x rounds (half away from zero) to claimed at claimed's
// decimals; the other comparisons are exact.
func compare(x *big.Rat, op, claimed string) bool {
	c, ok := parseDecimal(claimed)
	if !ok {
		return false
	}
	switch op {
	case "=":
		return roundsTo(x, c, decimals(claimed))
	case "!=":
		return !roundsTo(x, c, decimals(claimed))
	}
	return compareExact(x, op, c)
}

func compareExact(x *big.Rat, op string, c *big.Rat) bool {
	k := x.Cmp(c)
	switch op {
	case "=":
		return k == 0
	case "!=":
		return k != 0
	case "<":
		return k < 0
	case "<=":
		return k <= 0
	case ">":
		return k > 0
	case ">=":
		return k >= 0
	}
	return false
}

var ten = big.NewInt(10)

// roundsTo reports whether x rounded half away from zero at d decimals
// equals c.
func roundsTo(x, c *big.Rat, d int) bool {
	p := new(big.Int).Exp(ten, big.NewInt(int64(d)), nil)
	y := new(big.Rat).Mul(x, new(big.Rat).SetInt(p))
	// floor(|y| + 1/2) = (2|num| + den) div (2 den)
	num := new(big.Int).Abs(y.Num())
	num.Mul(num, big.NewInt(2)).Add(num, y.Denom())
	den := new(big.Int).Mul(y.Denom(), big.NewInt(2))
	r := new(big.Int).Quo(num, den)
	if y.Sign() < 0 {
		r.Neg(r)
	}
	want := new(big.Rat).Mul(c, new(big.Rat).SetInt(p))
	return want.IsInt() && want.Num().Cmp(r) == 0
}
