package a2a

import (
	"encoding/json"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// FinanceTolerance is the difference between the claimed and the
// recomputed total (both rounded to 0.01) that finance_guard still
// accepts, as QWED A2A's reference does: one cent, so that a total rounded
// per line and one rounded once agree.
const FinanceTolerance = "0.01"

// The reasons of a forwarded financial payload.
const (
	reasonNoFinancialClaim = "No verifiable financial claims in payload"
	reasonTotalsVerified   = "Financial totals verified"
)

// financeCtx computes exactly: with the bounds on each number (at most
// MaxAmountDigits+MaxScale digits of amount, MaxQuantityDigits+MaxScale of
// quantity) a product has at most 60 digits and a sum of MaxLineItems
// products at most 65, well within its precision.
var financeCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(100)
	c.Rounding = apd.RoundHalfUp
	return c
}()

var (
	tolerance = apd.New(1, -2)
	one       = apd.New(1, 0)
)

// FinanceGuard is finance_guard (QWED A2A "Engines"): it recomputes the
// total of a financial payload, {"data": {"claimed_total": X,
// "line_items": [{"description", "amount", "quantity"}, ...]}}, as the sum
// of amount × quantity (quantity 1 when absent, amount 0 when absent),
// exactly, in decimal (never binary floating point), rounds it and the
// claimed total half up to 0.01, and blocks the payload when they differ
// by more than FinanceTolerance, with the reason "Mathematical
// hallucination detected: claimed_total=X, computed_total=Y" (both
// rounded: 999.99 and 150.00) and the code CodeFinanceMismatch.
//
// Numbers are read from their JSON text: a JSON number, or a string
// holding one ("12.50"). A payload without claimed_total (or null) or
// without line items makes no financial claim and is forwarded, as in
// QWED A2A. Members other than these are not read (but their syntax is
// checked). What the guard cannot read is refused with a Problem (see
// Result): data or an item not an object, line_items not an array, a
// number that is not one (NaN, Infinity, "abc", true), a negative
// quantity, more than MaxLineItems items, an amount or claimed_total of
// |x| >= 10^15, a quantity >= 10^9, more than MaxScale decimal places, a
// number text over MaxNumberBytes, a repeated member. Amounts may be
// negative (credits, discounts).
func FinanceGuard(payload json.RawMessage) Result {
	s := scanner{p: payload}
	var (
		claimed, sum, amount, qty, prod apd.Decimal
		hasClaim, hasItems              bool
	)
	const dataField = "payload.data"
	if !s.begin('{', "payload", "an object") {
		return refused(EngineFinance, s.prob)
	}
	seenData := false
	for n := 0; ; n++ {
		name, esc, ok := s.member(n == 0, "payload")
		if !ok {
			break
		}
		if !s.nameIs(name, esc, "data") {
			s.skip("payload")
			continue
		}
		if seenData {
			s.fail(problem(CodeInvalidRequest, dataField, "payload repeats the member data"))
			break
		}
		seenData = true
		if s.isNull() {
			continue
		}
		if !s.begin('{', dataField, "an object") {
			break
		}
		var seenClaim, seenItems bool
		for m := 0; ; m++ {
			name, esc, ok := s.member(m == 0, dataField)
			if !ok {
				break
			}
			switch {
			case s.nameIs(name, esc, "claimed_total"):
				const f = dataField + ".claimed_total"
				if seenClaim {
					s.fail(problem(CodeInvalidRequest, f, "payload.data repeats the member claimed_total"))
					break
				}
				seenClaim = true
				if s.isNull() {
					continue
				}
				hasClaim = s.decimal(&claimed, -1, "claimed_total", MaxAmountDigits, true)
			case s.nameIs(name, esc, "line_items"):
				const f = dataField + ".line_items"
				if seenItems {
					s.fail(problem(CodeInvalidRequest, f, "payload.data repeats the member line_items"))
					break
				}
				seenItems = true
				if s.isNull() {
					continue
				}
				hasItems = s.lineItems(&sum, &amount, &qty, &prod) > 0
			default:
				s.skip(dataField)
			}
			if s.prob != nil {
				break
			}
		}
		if s.prob != nil {
			break
		}
	}
	if !s.end() {
		return refused(EngineFinance, s.prob)
	}
	if !hasClaim || !hasItems {
		return Result{Engine: EngineFinance, Reason: reasonNoFinancialClaim}
	}
	var computed, claimedQ, diff apd.Decimal
	_, err1 := financeCtx.Quantize(&computed, &sum, -2)
	_, err2 := financeCtx.Quantize(&claimedQ, &claimed, -2)
	_, err3 := financeCtx.Sub(&diff, &computed, &claimedQ)
	if err1 != nil || err2 != nil || err3 != nil {
		// Unreachable within the bounds; fail closed all the same.
		return refused(EngineFinance, problem(CodeInvalidRequest, dataField, "payload.data's totals cannot be computed exactly"))
	}
	diff.Abs(&diff)
	var buf [2 * 48]byte
	b := claimedQ.Append(buf[:0], 'f')
	nc := len(b)
	b = computed.Append(b, 'f')
	totals := string(b)
	r := Result{Engine: EngineFinance, ClaimedTotal: totals[:nc], ComputedTotal: totals[nc:], Reason: reasonTotalsVerified}
	if diff.Cmp(tolerance) > 0 {
		r.Blocked = true
		r.Code = CodeFinanceMismatch
		r.Reason = "Mathematical hallucination detected: claimed_total=" + r.ClaimedTotal + ", computed_total=" + r.ComputedTotal
	}
	return r
}

// lineItems reads data.line_items, adding each amount × quantity to sum;
// it returns the number of items (0 on a problem).
func (s *scanner) lineItems(sum, amount, qty, prod *apd.Decimal) int {
	const f = "payload.data.line_items"
	if !s.begin('[', f, "an array") {
		return 0
	}
	n := 0
	for ; s.elem(n == 0, f); n++ {
		if n == MaxLineItems {
			s.fail(&Problem{Code: CodeTooLong, Field: f, Limit: MaxLineItems, Size: MaxLineItems + 1, Offset: -1,
				Message: f + " has more than " + strconv.Itoa(MaxLineItems) + " items"})
			return 0
		}
		if !s.lineItem(n, amount, qty) {
			return 0
		}
		if _, err := financeCtx.Mul(prod, amount, qty); err != nil {
			s.fail(problem(CodeInvalidRequest, itemField(n, ""), itemField(n, "")+" cannot be computed exactly"))
			return 0
		}
		if _, err := financeCtx.Add(sum, sum, prod); err != nil {
			s.fail(problem(CodeInvalidRequest, itemField(n, ""), itemField(n, "")+" cannot be computed exactly"))
			return 0
		}
	}
	if s.prob != nil {
		return 0
	}
	return n
}

// itemField names member of line item i (of data when i < 0); built only
// for a problem.
func itemField(i int, member string) string {
	if i < 0 {
		return "payload.data." + member
	}
	f := "payload.data.line_items[" + strconv.Itoa(i) + "]"
	if member != "" {
		f += "." + member
	}
	return f
}

// lineItem reads one item's amount (0 when absent) and quantity (1 when
// absent).
func (s *scanner) lineItem(i int, amount, qty *apd.Decimal) bool {
	if s.peek() != '{' {
		f := itemField(i, "")
		return s.fail(problem(CodeInvalidRequest, f, f+" must be an object, not "+kindOf(s.p[s.i:])))
	}
	s.begin('{', "", "")
	amount.SetFinite(0, 0)
	qty.Set(one)
	var seenAmount, seenQty bool
	for m := 0; ; m++ {
		name, esc, ok := s.member(m == 0, "payload.data.line_items")
		if !ok {
			break
		}
		switch {
		case s.nameIs(name, esc, "amount"):
			if seenAmount {
				return s.fail(problem(CodeInvalidRequest, itemField(i, "amount"), itemField(i, "")+" repeats the member amount"))
			}
			seenAmount = true
			if !s.decimal(amount, i, "amount", MaxAmountDigits, true) {
				return false
			}
		case s.nameIs(name, esc, "quantity"):
			if seenQty {
				return s.fail(problem(CodeInvalidRequest, itemField(i, "quantity"), itemField(i, "")+" repeats the member quantity"))
			}
			seenQty = true
			if !s.decimal(qty, i, "quantity", MaxQuantityDigits, false) {
				return false
			}
		default:
			if !s.skip("payload.data.line_items") {
				return false
			}
		}
	}
	return s.prob == nil
}

// decimal reads a number (a JSON number, or a string holding one) into d
// exactly, within the bounds: at most intDigits integer digits, MaxScale
// decimal places, MaxNumberBytes of text; negative only when signed. The
// number is member of line item i (of data when i < 0).
func (s *scanner) decimal(d *apd.Decimal, i int, member string, intDigits int, signed bool) bool {
	var text []byte
	switch c := s.peek(); {
	case c == '"':
		raw, esc, ok := s.str("payload.data")
		if !ok {
			return false
		}
		if esc || len(raw) == 0 || numberLen(raw) != len(raw) {
			f := itemField(i, member)
			return s.fail(problem(CodeInvalidRequest, f, f+" must be a decimal number, not the string "+strconv.Quote(clip(string(raw)))))
		}
		text = raw
	case c == '-' || '0' <= c && c <= '9':
		text = s.p[s.i : s.i+numberLen(s.p[s.i:])]
		if len(text) == 0 {
			return s.syntax(itemField(i, member))
		}
		s.i += len(text)
	default:
		f := itemField(i, member)
		if c == 'N' || c == 'I' {
			return s.fail(problem(CodeInvalidRequest, f, f+" must be a finite decimal number: NaN and Infinity are not JSON numbers"))
		}
		return s.fail(problem(CodeInvalidRequest, f, f+" must be a decimal number, not "+kindOf(s.p[s.i:])))
	}
	if len(text) > MaxNumberBytes {
		return s.fail(tooLong(itemField(i, member), len(text), MaxNumberBytes, "bytes"))
	}
	if p := parseDecimal(d, text, i, member, intDigits, signed); p != nil {
		return s.fail(p)
	}
	return true
}

// parseDecimal sets d to the value of text, a JSON number of at most
// MaxNumberBytes, within the bounds of decimal.
func parseDecimal(d *apd.Decimal, text []byte, i int, member string, intDigits int, signed bool) *Problem {
	neg := text[0] == '-'
	// The digits of the mantissa, without the point; frac counts those
	// after it.
	var (
		digits        [MaxNumberBytes]byte
		nd, frac      int
		afterPoint    bool
		exp           int64
		expNeg, inExp bool
	)
	for _, c := range text {
		switch {
		case c == '-' && !inExp:
		case c == '.':
			afterPoint = true
		case c == 'e' || c == 'E':
			inExp = true
		case inExp && c == '-':
			expNeg = true
		case inExp && c == '+':
		case inExp:
			if exp < 1_000_000 {
				exp = exp*10 + int64(c-'0')
			}
		default:
			digits[nd] = c
			nd++
			if afterPoint {
				frac++
			}
		}
	}
	if expNeg {
		exp = -exp
	}
	// Strip leading and trailing zeros: sig digits[lo:hi] × 10^e.
	lo, hi := 0, nd
	for lo < hi && digits[lo] == '0' {
		lo++
	}
	for hi > lo && digits[hi-1] == '0' {
		hi--
	}
	if lo == hi {
		d.SetFinite(0, 0)
		return nil
	}
	field := func() string { return itemField(i, member) }
	if neg && !signed {
		return problem(CodeInvalidRequest, field(), field()+" must not be negative, not "+string(text))
	}
	e := exp - int64(frac) + int64(nd-hi)
	if e < -MaxScale {
		return problem(CodeInvalidRequest, field(), field()+" "+string(text)+" has more than "+strconv.Itoa(MaxScale)+" decimal places")
	}
	if int64(hi-lo)+e > int64(intDigits) {
		return problem(CodeInvalidRequest, field(), field()+" "+string(text)+" is out of range: its magnitude must be less than 10^"+strconv.Itoa(intDigits))
	}
	if hi-lo <= 18 {
		var c int64
		for _, ch := range digits[lo:hi] {
			c = c*10 + int64(ch-'0')
		}
		if neg {
			c = -c
		}
		d.SetFinite(c, int32(e))
		return nil
	}
	if _, _, err := d.SetString(string(text)); err != nil {
		return problem(CodeInvalidRequest, field(), field()+" must be a decimal number, not "+string(text))
	}
	return nil
}
