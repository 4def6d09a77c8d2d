package a2a

import (
	"encoding/json"
	"math"
	"math/bits"
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

// tolerance is FinanceTolerance.
var tolerance = apd.New(1, -2)

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
	var t totals
	r := financeGuard(payload, &t)
	if !r.Blocked && t.nc > 0 {
		totals := string(t.buf[:t.n])
		r.ClaimedTotal, r.ComputedTotal = totals[:t.nc], totals[t.nc:]
	}
	return r
}

// FinanceCheck is FinanceGuard for a caller that records a forwarded
// payload's totals nowhere (the gate's verdict event names them only when
// it blocks): the same Result, except that ClaimedTotal and ComputedTotal
// of a forwarded payload are "". It spares their allocation; a blocked
// payload's totals share the string of its reason.
func FinanceCheck(payload json.RawMessage) Result {
	var t totals
	return financeGuard(payload, &t)
}

// totals holds finance_guard's two totals, written side by side in buf:
// buf[:nc] the claimed one, buf[nc:n] the computed one; nc is 0 when the
// payload makes no financial claim.
type totals struct {
	buf   [2 * 48]byte
	nc, n int
}

// reasonMismatch starts the reason of a blocked financial payload.
const reasonMismatch = "Mathematical hallucination detected: claimed_total="

// financeGuard is FinanceGuard with the totals of a forwarded payload
// left in *tot.
func financeGuard(payload json.RawMessage, tot *totals) Result {
	s := scanner{p: payload}
	var (
		claimed            apd.Decimal
		claimedNum         num
		t                  total
		hasClaim, hasItems bool
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
		if !s.once(&seenData, dataField, "payload", "data") {
			break
		}
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
				if !s.once(&seenClaim, dataField+".claimed_total", dataField, "claimed_total") {
					break
				}
				if s.isNull() {
					continue
				}
				claimedNum, hasClaim = s.decimal(&claimed, -1, "claimed_total", MaxAmountDigits, true)
			case s.nameIs(name, esc, "line_items"):
				if !s.once(&seenItems, dataField+".line_items", dataField, "line_items") {
					break
				}
				if s.isNull() {
					continue
				}
				hasItems = s.lineItems(&t) > 0
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
	var (
		buf     = tot.buf[:0]
		b       []byte
		nc      int
		blocked bool
	)
	claimedCents, ok1 := claimedNum.cents()
	computedCents, ok2 := t.cents()
	if ok1 && ok2 {
		// The common case, in integers: both totals in cents.
		b = appendCents(buf[:0], claimedCents)
		nc = len(b)
		b = appendCents(b, computedCents)
		diff := computedCents - claimedCents
		blocked = diff > 1 || diff < -1
	} else {
		if !claimedNum.big {
			claimed.SetFinite(claimedNum.coef, claimedNum.exp)
		}
		var computed, claimedQ, diff apd.Decimal
		_, err1 := financeCtx.Quantize(&computed, t.decimal(), -2)
		_, err2 := financeCtx.Quantize(&claimedQ, &claimed, -2)
		_, err3 := financeCtx.Sub(&diff, &computed, &claimedQ)
		if err1 != nil || err2 != nil || err3 != nil {
			// Unreachable within the bounds; fail closed all the same.
			return refused(EngineFinance, problem(CodeInvalidRequest, dataField, "payload.data's totals cannot be computed exactly"))
		}
		diff.Abs(&diff)
		blocked = diff.Cmp(tolerance) > 0
		// A total that rounds to zero is 0.00, never -0.00.
		computed.Negative = computed.Negative && !computed.IsZero()
		claimedQ.Negative = claimedQ.Negative && !claimedQ.IsZero()
		b = claimedQ.Append(buf[:0], 'f')
		nc = len(b)
		b = computed.Append(b, 'f')
	}
	tot.nc, tot.n = nc, len(b)
	if !blocked {
		return Result{Engine: EngineFinance, Reason: reasonTotalsVerified}
	}
	const sep = ", computed_total="
	reason := reasonMismatch + string(b[:nc]) + sep + string(b[nc:])
	cs := len(reasonMismatch)
	return Result{Engine: EngineFinance, Blocked: true, Code: CodeFinanceMismatch, Reason: reason,
		ClaimedTotal: reason[cs : cs+nc], ComputedTotal: reason[cs+nc+len(sep):]}
}

// centsOf rounds coef × 10^-scale half up (away from zero) to a whole
// number of cents; false when that needs more than an int64.
func centsOf(coef int64, scale int32) (int64, bool) {
	if scale <= 2 {
		if 2-scale >= int32(len(pow10)) {
			return 0, coef == 0
		}
		return mulInt64(coef, pow10[2-scale])
	}
	if scale-2 >= int32(len(pow10)) {
		return 0, false
	}
	d := pow10[scale-2]
	q, r := coef/d, coef%d
	if r < 0 {
		r = -r
	}
	if r >= d-r {
		if coef < 0 {
			q--
		} else {
			q++
		}
	}
	return q, true
}

// maxCents bounds the totals compared in integers, so that their
// difference cannot overflow.
const maxCents = 1 << 62

// cents is n rounded to cents; false for a big number or past maxCents.
func (n num) cents() (int64, bool) {
	if n.big {
		return 0, false
	}
	c, ok := centsOf(n.coef, -n.exp)
	return c, ok && c < maxCents && c > -maxCents
}

// cents is the total rounded to cents; false when it is held in apd or
// is past maxCents.
func (t *total) cents() (int64, bool) {
	if t.isBig {
		return 0, false
	}
	c, ok := centsOf(t.small, t.scale)
	return c, ok && c < maxCents && c > -maxCents
}

// appendCents appends c cents as a decimal with two places ("-0.05",
// "150.00"); zero is "0.00".
func appendCents(b []byte, c int64) []byte {
	u := uint64(c)
	if c < 0 {
		b = append(b, '-')
		u = uint64(-c)
	}
	b = strconv.AppendUint(b, u/100, 10)
	return append(b, '.', byte('0'+u%100/10), byte('0'+u%10))
}

// num is a number read by decimal: coef × 10^exp, or, when big (more
// than 18 significant digits), the apd.Decimal decimal was given.
type num struct {
	coef int64
	exp  int32
	big  bool
}

// total is the running sum of amount × quantity: in an int64 at a decimal
// scale (sum = small × 10^-scale) while every product and sum fits, which
// is the common case (cents times units), else in apd decimals. Both are
// exact; the int64 form only spares the work.
type total struct {
	small int64
	scale int32
	isBig bool
	big   apd.Decimal
	// amount and qty receive numbers of more than 18 digits; prod is
	// scratch.
	amount, qty, prod apd.Decimal
}

// pow10 are the powers of ten an int64 holds.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// mulInt64 returns a × b, false on overflow.
func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	neg := (a < 0) != (b < 0)
	ua, ub := uint64(a), uint64(b)
	if a < 0 {
		ua = uint64(-a)
	}
	if b < 0 {
		ub = uint64(-b)
	}
	hi, lo := bits.Mul64(ua, ub)
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}

// rescale returns v × 10^k (k >= 0), false on overflow.
func rescale(v int64, k int32) (int64, bool) {
	if k == 0 {
		return v, true
	}
	if k >= int32(len(pow10)) {
		return 0, v == 0
	}
	return mulInt64(v, pow10[k])
}

// add adds amount × quantity to the total; false when apd reports a
// condition (unreachable within the bounds).
func (t *total) add(a, q num) bool {
	if !t.isBig && !a.big && !q.big && t.addSmall(a, q) {
		return true
	}
	if !t.isBig {
		t.big.SetFinite(t.small, -t.scale)
		t.isBig = true
	}
	if !a.big {
		t.amount.SetFinite(a.coef, a.exp)
	}
	if !q.big {
		t.qty.SetFinite(q.coef, q.exp)
	}
	if _, err := financeCtx.Mul(&t.prod, &t.amount, &t.qty); err != nil {
		return false
	}
	_, err := financeCtx.Add(&t.big, &t.big, &t.prod)
	return err == nil
}

// addSmall adds a × q in int64 arithmetic; false (the total unchanged)
// when a step would overflow.
func (t *total) addSmall(a, q num) bool {
	p, ok := mulInt64(a.coef, q.coef)
	if !ok {
		return false
	}
	exp := a.exp + q.exp
	var pscale int32
	if exp > 0 {
		if p, ok = rescale(p, exp); !ok {
			return false
		}
	} else {
		pscale = -exp
	}
	sum, scale := t.small, t.scale
	switch {
	case pscale > scale:
		if sum, ok = rescale(sum, pscale-scale); !ok {
			return false
		}
		scale = pscale
	case pscale < scale:
		if p, ok = rescale(p, scale-pscale); !ok {
			return false
		}
	}
	r := sum + p
	if (sum > 0 && p > 0 && r < 0) || (sum < 0 && p < 0 && r >= 0) {
		return false
	}
	t.small, t.scale = r, scale
	return true
}

// decimal returns the total as an apd decimal.
func (t *total) decimal() *apd.Decimal {
	if !t.isBig {
		t.big.SetFinite(t.small, -t.scale)
	}
	return &t.big
}

// lineItems reads data.line_items, adding each amount × quantity to t; it
// returns the number of items (0 on a problem).
func (s *scanner) lineItems(t *total) int {
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
		a, q, ok := s.lineItem(n, t)
		if !ok {
			return 0
		}
		if !t.add(a, q) {
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
// absent); numbers of more than 18 digits go to t.amount and t.qty.
func (s *scanner) lineItem(i int, t *total) (amount, qty num, ok bool) {
	if s.peek() != '{' {
		f := itemField(i, "")
		return num{}, num{}, s.fail(problem(CodeInvalidRequest, f, f+" must be an object, not "+kindOf(s.p[s.i:])))
	}
	s.begin('{', "", "")
	qty.coef = 1
	var seenAmount, seenQty bool
	for m := 0; ; m++ {
		name, esc, more := s.member(m == 0, "payload.data.line_items")
		if !more {
			break
		}
		switch {
		case s.nameIs(name, esc, "amount"):
			if seenAmount {
				return num{}, num{}, s.fail(problem(CodeInvalidRequest, itemField(i, "amount"), itemField(i, "")+" repeats the member amount"))
			}
			seenAmount = true
			if amount, ok = s.decimal(&t.amount, i, "amount", MaxAmountDigits, true); !ok {
				return num{}, num{}, false
			}
		case s.nameIs(name, esc, "quantity"):
			if seenQty {
				return num{}, num{}, s.fail(problem(CodeInvalidRequest, itemField(i, "quantity"), itemField(i, "")+" repeats the member quantity"))
			}
			seenQty = true
			if qty, ok = s.decimal(&t.qty, i, "quantity", MaxQuantityDigits, false); !ok {
				return num{}, num{}, false
			}
		default:
			if !s.skip("payload.data.line_items") {
				return num{}, num{}, false
			}
		}
	}
	return amount, qty, s.prob == nil
}

// decimal reads a number (a JSON number, or a string holding one) exactly,
// within the bounds: at most intDigits integer digits, MaxScale decimal
// places, MaxNumberBytes of text; negative only when signed. The number is
// member of line item i (of data when i < 0). A number of more than 18
// significant digits is set in big.
func (s *scanner) decimal(big *apd.Decimal, i int, member string, intDigits int, signed bool) (num, bool) {
	var text []byte
	switch c := s.peek(); {
	case c == '"':
		raw, esc, ok := s.str("payload.data")
		if !ok {
			return num{}, false
		}
		if esc || len(raw) == 0 || numberLen(raw) != len(raw) {
			f := itemField(i, member)
			return num{}, s.fail(problem(CodeInvalidRequest, f, f+" must be a decimal number, not the string "+strconv.Quote(clip(string(raw)))))
		}
		text = raw
	case c == '-' || '0' <= c && c <= '9':
		text = s.p[s.i : s.i+numberLen(s.p[s.i:])]
		if len(text) == 0 {
			return num{}, s.syntax(itemField(i, member))
		}
		s.i += len(text)
	default:
		f := itemField(i, member)
		if c == 'N' || c == 'I' {
			return num{}, s.fail(problem(CodeInvalidRequest, f, f+" must be a finite decimal number: NaN and Infinity are not JSON numbers"))
		}
		return num{}, s.fail(problem(CodeInvalidRequest, f, f+" must be a decimal number, not "+kindOf(s.p[s.i:])))
	}
	if len(text) > MaxNumberBytes {
		return num{}, s.fail(tooLong(itemField(i, member), len(text), MaxNumberBytes, "bytes"))
	}
	n, p := parseDecimal(big, text, i, member, intDigits, signed)
	if p != nil {
		return num{}, s.fail(p)
	}
	return n, true
}

// mantissa accumulates a number's significant digits: leading zeros are
// dropped, trailing ones held back (zeros) until a non-zero digit
// follows; coef holds the first 18 significant digits.
type mantissa struct {
	coef       int64
	sig, zeros int
}

func (m *mantissa) digit(c byte) {
	switch {
	case c != '0':
		m.sig += m.zeros + 1
		if m.sig <= 18 {
			m.coef = m.coef*pow10[m.zeros+1] + int64(c-'0')
		}
		m.zeros = 0
	case m.sig != 0:
		m.zeros++
	}
}

// parseDecimal reads text, a JSON number of at most MaxNumberBytes, within
// the bounds of decimal, in one pass: significant digits accumulate in an
// int64 (trailing zeros held back, so that 1.500 is 15 × 10^-1) while
// there are at most 18 of them; past that apd parses the text into big.
func parseDecimal(big *apd.Decimal, text []byte, i int, member string, intDigits int, signed bool) (num, *Problem) {
	var (
		m           mantissa
		frac        int
		exp         int64
		neg, expNeg bool
	)
	// text is a JSON number (numberLen): -?int(.frac)?([eE][+-]?exp)?
	k := 0
	if text[0] == '-' {
		neg = true
		k++
	}
	for ; k < len(text) && '0' <= text[k] && text[k] <= '9'; k++ {
		m.digit(text[k])
	}
	if k < len(text) && text[k] == '.' {
		for k++; k < len(text) && '0' <= text[k] && text[k] <= '9'; k++ {
			m.digit(text[k])
			frac++
		}
	}
	if k < len(text) {
		k++ // e or E
		switch text[k] {
		case '-':
			expNeg = true
			k++
		case '+':
			k++
		}
		for ; k < len(text); k++ {
			if exp < 1_000_000 {
				exp = exp*10 + int64(text[k]-'0')
			}
		}
	}
	coef, sig, zeros := m.coef, m.sig, m.zeros
	if sig == 0 {
		return num{}, nil
	}
	if expNeg {
		exp = -exp
	}
	field := func() string { return itemField(i, member) }
	if neg && !signed {
		return num{}, problem(CodeInvalidRequest, field(), field()+" must not be negative, not "+string(text))
	}
	e := exp - int64(frac) + int64(zeros)
	if e < -MaxScale {
		return num{}, problem(CodeInvalidRequest, field(), field()+" "+string(text)+" has more than "+strconv.Itoa(MaxScale)+" decimal places")
	}
	if int64(sig)+e > int64(intDigits) {
		return num{}, problem(CodeInvalidRequest, field(), field()+" "+string(text)+" is out of range: its magnitude must be less than 10^"+strconv.Itoa(intDigits))
	}
	if sig > 18 {
		if _, _, err := big.SetString(string(text)); err != nil {
			return num{}, problem(CodeInvalidRequest, field(), field()+" must be a decimal number, not "+string(text))
		}
		return num{big: true}, nil
	}
	if neg {
		coef = -coef
	}
	return num{coef: coef, exp: int32(e)}, nil
}
