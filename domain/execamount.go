package domain

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The amount of an execute (the Agent Policy Engine spec §2.3): the
// request's amount_cents (an integer, in the minor units of the business's
// currency), else its amount (a decimal in the currency's unit, as a JSON
// number or a string), else 0. Parsing is exact, in integer arithmetic:
// no float ever holds an amount. Refused (QWED-REQ-001): a negative
// amount, an exponent, NaN or anything that is not a plain decimal, more
// decimal places than the currency has (unless they are zeros), an amount
// over MaxExecuteAmountCents, a member given twice, a member named
// amount or amount_cents in another case (Unicode simple folding
// included: a business decoding with Go's encoding/json would take it for
// the amount), and amount_cents and amount given together with different values (a business reading the
// other member must not be charged more than the policies saw).

// MaxExecuteAmountCents bounds an execute's amount (10^15 minor units).
const MaxExecuteAmountCents = 1_000_000_000_000_000

// currencyExponents are the ISO 4217 minor units of the active currency
// codes; a code not listed is not a currency.
var currencyExponents = func() map[string]int {
	m := map[string]int{}
	for _, c := range []string{
		"AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BMD", "BND",
		"BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHE", "CHF", "CHW", "CNY", "COP", "COU",
		"CRC", "CUC", "CUP", "CVE", "CZK", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL",
		"GHS", "GIP", "GMD", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IRR", "JMD", "KES", "KGS",
		"KHR", "KPW", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP",
		"MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "PAB", "PEN",
		"PGK", "PHP", "PKR", "PLN", "QAR", "RON", "RSD", "RUB", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE",
		"SLL", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TOP", "TRY", "TTD", "TWD", "TZS",
		"UAH", "USD", "USN", "UYU", "UZS", "VED", "VES", "WST", "XCD", "XCG", "YER", "ZAR", "ZMW", "ZWG", "ZWL",
	} {
		m[c] = 2
	}
	for _, c := range []string{"BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF"} {
		m[c] = 0
	}
	for _, c := range []string{"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"} {
		m[c] = 3
	}
	m["CLF"], m["UYW"] = 4, 4
	return m
}()

// currencyExponent returns the minor units of an ISO 4217 code.
func currencyExponent(code string) (int, bool) {
	e, ok := currencyExponents[code]
	return e, ok
}

// executeAmount returns the amount of an execute's request (a JSON object,
// checked valid) in the minor units of currency.
func executeAmount(request []byte, currency string) (int64, *Error) {
	exp, ok := currencyExponent(currency)
	if !ok {
		exp = 2
	}
	var cents, amount []byte
	var err *Error
	objectMembers(request, func(key, val []byte) bool {
		switch string(key) {
		case "amount_cents":
			if cents != nil {
				err = fieldError(CodeInvalidRequest, "request.amount_cents", "is given twice")
				return false
			}
			cents = val
		case "amount":
			if amount != nil {
				err = fieldError(CodeInvalidRequest, "request.amount", "is given twice")
				return false
			}
			amount = val
		default:
			for _, name := range [...]string{"amount_cents", "amount"} {
				if strings.EqualFold(string(key), name) {
					err = fieldError(CodeInvalidRequest, "request."+name, "must be named exactly %q, not %q: a business reading member names without regard to case would take it for the amount",
						name, clipText(string(key), 40))
					return false
				}
			}
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	var c, a int64
	if cents != nil {
		if c, err = parseCents(cents); err != nil {
			return 0, err
		}
	}
	if amount != nil {
		if a, err = parseAmount(amount, exp, currency); err != nil {
			return 0, err
		}
	}
	switch {
	case cents != nil && amount != nil && a != c:
		return 0, fieldError(CodeInvalidRequest, "request.amount", "and request.amount_cents differ (%s %s is %d minor units, not %d)",
			clipText(string(amount), 40), currency, a, c)
	case cents != nil:
		return c, nil
	}
	return a, nil
}

// parseCents parses amount_cents: a JSON integer, 0 to
// MaxExecuteAmountCents.
func parseCents(v []byte) (int64, *Error) {
	const field = "request.amount_cents"
	if len(v) > 0 && v[0] == '-' {
		return 0, fieldError(CodeInvalidRequest, field, "must not be negative")
	}
	if len(v) == 0 || v[0] < '0' || v[0] > '9' {
		return 0, fieldError(CodeInvalidRequest, field, "must be an integer number of minor units")
	}
	whole, frac, ok := splitDecimal(v)
	if !ok || frac != nil {
		return 0, fieldError(CodeInvalidRequest, field, "must be an integer number of minor units, without a fraction or an exponent")
	}
	n, ok := digitsValue(whole, 0, nil)
	if !ok {
		return 0, fieldError(CodeInvalidRequest, field, "must not exceed %d", int64(MaxExecuteAmountCents))
	}
	return n, nil
}

// parseAmount parses amount: a plain decimal (a JSON number or a string)
// in the currency's unit, exactly, into minor units.
func parseAmount(v []byte, exp int, currency string) (int64, *Error) {
	const field = "request.amount"
	if len(v) > 0 && v[0] == '"' {
		v = v[1 : len(v)-1] // a string without escapes: any escape fails below
	}
	if len(v) > 0 && v[0] == '-' {
		return 0, fieldError(CodeInvalidRequest, field, "must not be negative")
	}
	whole, frac, ok := splitDecimal(v)
	if !ok {
		return 0, fieldError(CodeInvalidRequest, field, "must be a plain decimal number (digits, an optional point and decimals; no sign, exponent, NaN or infinity)")
	}
	for len(frac) > exp && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if len(frac) > exp {
		return 0, fieldError(CodeInvalidRequest, field, "has more decimal places than %s's %d", currency, exp)
	}
	n, ok := digitsValue(whole, exp, frac)
	if !ok {
		return 0, fieldError(CodeInvalidRequest, field, "must not exceed %d minor units", int64(MaxExecuteAmountCents))
	}
	return n, nil
}

// splitDecimal splits a plain decimal ("0", "12", "12.50") into its whole
// and fraction digits; frac is nil without a point. A leading zero
// followed by digits, an empty part, or any other byte is refused.
func splitDecimal(v []byte) (whole, frac []byte, ok bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	whole = v[:i]
	if len(whole) == 0 || (len(whole) > 1 && whole[0] == '0') {
		return nil, nil, false
	}
	if i == len(v) {
		return whole, nil, true
	}
	if v[i] != '.' {
		return nil, nil, false
	}
	frac = v[i+1:]
	if len(frac) == 0 {
		return nil, nil, false
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return nil, nil, false
		}
	}
	return whole, frac, true
}

// digitsValue returns whole×10^exp + frac (padded to exp digits), or false
// past MaxExecuteAmountCents.
func digitsValue(whole []byte, exp int, frac []byte) (int64, bool) {
	var n int64
	add := func(c byte) bool {
		n = n*10 + int64(c-'0')
		return n <= MaxExecuteAmountCents
	}
	for _, c := range whole {
		if !add(c) {
			return 0, false
		}
	}
	for i := range exp {
		c := byte('0')
		if i < len(frac) {
			c = frac[i]
		}
		if !add(c) {
			return 0, false
		}
	}
	return n, true
}

// formatAmount writes minor units in the currency's unit ("12.50").
func formatAmount(cents int64, currency string) string {
	exp, ok := currencyExponent(currency)
	if !ok {
		exp = 2
	}
	s := strconv.FormatInt(cents, 10)
	if exp == 0 {
		return s
	}
	for len(s) <= exp {
		s = "0" + s
	}
	return s[:len(s)-exp] + "." + s[len(s)-exp:]
}

// objectMembers calls fn with each member of the JSON object obj (valid
// JSON), its key unescaped and its value's bytes, until fn returns false.
func objectMembers(obj []byte, fn func(key, val []byte) bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	i = skipWS(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		end := skipString(obj, i)
		key := obj[i+1 : end-1]
		for _, c := range key {
			if c == '\\' {
				var s string
				if json.Unmarshal(obj[i:end], &s) == nil {
					key = []byte(s)
				}
				break
			}
		}
		i = skipWS(obj, end)
		i = skipWS(obj, i+1) // ':'
		vEnd := skipValue(obj, i)
		if !fn(key, obj[i:vEnd]) {
			return
		}
		i = skipWS(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipWS(obj, i+1)
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i] (valid
// JSON).
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// clipText shortens s to n bytes for a message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
