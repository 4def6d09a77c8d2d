package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain/strictjson"
)

// policyShape is the closed shape of a policy: strictjson refuses unknown
// members, a member in another case and a repeated member name at any
// depth.
var policyShape = strictjson.ShapeOf(reflect.TypeFor[Policy](), true)

// Decode reads one policy from its JSON text, as a client sends it, and
// validates it (Validate). data must be exactly one JSON object of at most
// MaxPolicyBytes with the members of Policy and no other, none repeated (in
// any case, at any depth); "version" is the gate's and is refused.
//
// Decode returns the policy, normalized (scope agents and categories
// sorted), or the first problem found, never both: malformed JSON, a
// member of the wrong type or with an invalid value, an unknown or
// repeated member are QWED-REQ-001; an absent required member is
// QWED-REQ-002; a policy or member over its bound is QWED-REQ-004; an
// unknown type is QWED-REQ-005.
func Decode(data []byte) (*Policy, *Problem) {
	if len(data) > MaxPolicyBytes {
		return nil, problem(CodeTooLong, "", "the policy is "+strconv.Itoa(len(data))+" bytes long: the limit is "+strconv.Itoa(MaxPolicyBytes)+" bytes")
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, problem(CodeInvalidRequest, "", "the policy is empty: a JSON object is required")
	}
	if err := strictjson.Check(data, policyShape); err != nil {
		var e *strictjson.Error
		if errors.As(err, &e) && e.Kind != strictjson.KindSyntax {
			return nil, problem(CodeInvalidRequest, e.Path, e.Error())
		}
		return nil, problem(CodeInvalidRequest, "", err.Error())
	}
	if trimmed[0] != '{' {
		return nil, problem(CodeInvalidRequest, "", "the policy must be a JSON object")
	}
	var p Policy
	if err := json.Unmarshal(data, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, invalid(te.Field, "must be "+jsonKind(te.Type)+", not "+te.Value)
		}
		return nil, problem(CodeInvalidRequest, "", "the policy is not valid JSON")
	}
	if p.Version != 0 {
		return nil, invalid("version", "is set by the gate, not by a client")
	}
	if pr := Validate(&p); pr != nil {
		return nil, pr
	}
	return &p, nil
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int64, reflect.Int, reflect.Int32:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

// Validate checks a policy built in Go as Decode checks a decoded one and
// normalizes it in place (scope agents, categories and each window's days
// sorted). It returns the first problem, or nil. The version is not
// checked (the gate sets it).
func Validate(p *Policy) *Problem {
	if p.ID == "" {
		return problem(CodeMissingField, "id", "missing required member id")
	}
	if pr := checkID("id", p.ID); pr != nil {
		return pr
	}
	if pr := checkName(p.Name); pr != nil {
		return pr
	}
	if pr := checkScope(&p.Scope); pr != nil {
		return pr
	}
	if p.Override && p.Scope.BusinessID == "" {
		return problem(CodeMissingField, "scope.business_id", "an override applies to one business: scope.business_id is required")
	}
	set := map[Type]bool{TypeSpending: p.Spending != nil, TypeCategory: p.Category != nil,
		TypeConfirmation: p.Confirmation != nil, TypeTimeWindow: p.TimeWindow != nil}
	switch p.Type {
	case "":
		return problem(CodeMissingField, "type", "missing required member type")
	case TypeSpending, TypeCategory, TypeConfirmation, TypeTimeWindow:
	default:
		return problem(CodeUnsupportedType, "type", "type must be spending, category, confirmation or time_window")
	}
	for _, t := range []Type{TypeSpending, TypeCategory, TypeConfirmation, TypeTimeWindow} {
		switch {
		case t == p.Type && !set[t]:
			return problem(CodeMissingField, string(t), "a "+string(t)+" policy needs member "+string(t))
		case t != p.Type && set[t]:
			return invalid(string(t), "belongs to a "+string(t)+" policy, not a "+string(p.Type)+" one")
		}
	}
	switch p.Type {
	case TypeSpending:
		return checkSpending(p.Spending)
	case TypeCategory:
		return checkCategory(p.Category)
	case TypeConfirmation:
		return checkConfirmation(p.Confirmation)
	}
	return checkTimeWindow(p.TimeWindow)
}

// checkID checks an id of a policy, agent or business: 1 to MaxIDChars
// characters of [A-Za-z0-9._:-].
func checkID(field, id string) *Problem {
	if id == "" || len(id) > MaxIDChars {
		if len(id) > MaxIDChars {
			return problem(CodeTooLong, field, field+" is "+strconv.Itoa(len(id))+" characters long: the limit is "+strconv.Itoa(MaxIDChars))
		}
		return invalid(field, "must not be empty")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return invalid(field, "may hold only the characters A-Z a-z 0-9 . _ : -")
		}
	}
	return nil
}

func checkName(name string) *Problem {
	if !utf8.ValidString(name) {
		return invalid("name", "is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(name); n > MaxNameChars {
		return problem(CodeTooLong, "name", "name is "+strconv.Itoa(n)+" characters long: the limit is "+strconv.Itoa(MaxNameChars))
	}
	for _, r := range name {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return invalid("name", "must not hold control or format characters")
		}
	}
	return nil
}

func checkScope(s *Scope) *Problem {
	if len(s.Agents) > MaxScopeAgents {
		return tooMany("scope.agents", len(s.Agents), MaxScopeAgents, "agents")
	}
	for i, a := range s.Agents {
		if pr := checkID("scope.agents["+strconv.Itoa(i)+"]", a); pr != nil {
			return pr
		}
	}
	if s.Agents != nil && len(s.Agents) == 0 {
		s.Agents = nil
	}
	slices.Sort(s.Agents)
	if i := repeated(s.Agents); i >= 0 {
		return invalid("scope.agents", "names agent "+strconv.Quote(s.Agents[i])+" twice")
	}
	if s.BusinessID != "" {
		return checkID("scope.business_id", s.BusinessID)
	}
	return nil
}

// repeated returns the index of an element of the sorted s equal to the
// one before it, or -1.
func repeated(s []string) int {
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return i
		}
	}
	return -1
}

func checkCents(field string, v int64) *Problem {
	if v < 0 || v > MaxCents {
		return invalid(field, "must be from 1 to "+strconv.FormatInt(MaxCents, 10)+" cents (leave it out for no limit)")
	}
	return nil
}

func checkSpending(s *Spending) *Problem {
	for _, f := range []struct {
		name string
		v    int64
	}{{"spending.per_transaction_cents", s.PerTransactionCents}, {"spending.daily_cents", s.DailyCents},
		{"spending.weekly_cents", s.WeeklyCents}, {"spending.monthly_cents", s.MonthlyCents}} {
		if pr := checkCents(f.name, f.v); pr != nil {
			return pr
		}
	}
	if s.PerTransactionCents == 0 && s.DailyCents == 0 && s.WeeklyCents == 0 && s.MonthlyCents == 0 {
		return problem(CodeMissingField, "spending", "a spending policy needs at least one of per_transaction_cents, daily_cents, weekly_cents, monthly_cents")
	}
	switch s.OnExceed {
	case "", OnExceedBlock, OnExceedNotify, OnExceedConfirm:
		return nil
	}
	return invalid("spending.on_exceed", "must be block, notify or confirm")
}

func checkCategory(c *Category) *Problem {
	switch c.Mode {
	case "":
		return problem(CodeMissingField, "category.mode", "missing required member category.mode")
	case ModeAllow, ModeBlock:
	default:
		return invalid("category.mode", "must be allow or block")
	}
	if pr := checkLen("category.categories", len(c.Categories), MaxCategories, "category", "categories"); pr != nil {
		return pr
	}
	for i, s := range c.Categories {
		if pr := checkCategoryToken("category.categories["+strconv.Itoa(i)+"]", s); pr != nil {
			return pr
		}
	}
	slices.Sort(c.Categories)
	if i := repeated(c.Categories); i >= 0 {
		return invalid("category.categories", "names category "+strconv.Quote(c.Categories[i])+" twice")
	}
	return nil
}

// checkCategoryToken checks one category: 1 to MaxCategoryChars lowercase
// characters [a-z0-9_-].
func checkCategoryToken(field, s string) *Problem {
	if len(s) > MaxCategoryChars {
		return problem(CodeTooLong, field, field+" is "+strconv.Itoa(len(s))+" characters long: the limit is "+strconv.Itoa(MaxCategoryChars))
	}
	if s == "" {
		return invalid(field, "must not be empty")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return invalid(field, "may hold only the characters a-z 0-9 _ -")
		}
	}
	return nil
}

func checkConfirmation(c *Confirmation) *Problem {
	if pr := checkCents("confirmation.above_cents", c.AboveCents); pr != nil {
		return pr
	}
	if !c.Always && c.AboveCents == 0 && !c.FirstTimeBusiness {
		return problem(CodeMissingField, "confirmation", "a confirmation policy needs always, above_cents or first_time_business")
	}
	return nil
}

// dayNames are the days of a window, in the order of time.Weekday.
var dayNames = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// dayIndex returns the time.Weekday of a day name, or -1.
func dayIndex(s string) int {
	for i, d := range dayNames {
		if d == s {
			return i
		}
	}
	return -1
}

// parseClock reads "HH:MM" (00:00 to 24:00) as minutes after midnight, or
// -1.
func parseClock(s string) int {
	if len(s) != 5 || s[2] != ':' {
		return -1
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
	}
	h, m := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	if m > 59 || h > 24 || h == 24 && m != 0 {
		return -1
	}
	return h*60 + m
}

func checkTimeWindow(w *TimeWindow) *Problem {
	switch {
	case w.TimeZone == "":
		return problem(CodeMissingField, "time_window.time_zone", "missing required member time_window.time_zone")
	case len(w.TimeZone) > MaxTimeZoneChars:
		return problem(CodeTooLong, "time_window.time_zone", "time_window.time_zone is "+strconv.Itoa(len(w.TimeZone))+" characters long: the limit is "+strconv.Itoa(MaxTimeZoneChars))
	}
	if _, err := zone(w.TimeZone); err != nil {
		return invalid("time_window.time_zone", "is not an IANA time zone: "+strconv.Quote(w.TimeZone))
	}
	switch w.Outside {
	case "", OutsideBlock, OutsideQueue:
	default:
		return invalid("time_window.outside", "must be block or queue")
	}
	if pr := checkLen("time_window.windows", len(w.Windows), MaxWindows, "window", "windows"); pr != nil {
		return pr
	}
	var week [7][]span // the windows of each day, to find overlaps
	for i := range w.Windows {
		win := &w.Windows[i]
		f := "time_window.windows[" + strconv.Itoa(i) + "]"
		start, end := parseClock(win.Start), parseClock(win.End)
		switch {
		case win.Start == "":
			return problem(CodeMissingField, f+".start", "missing required member "+f+".start")
		case win.End == "":
			return problem(CodeMissingField, f+".end", "missing required member "+f+".end")
		case start < 0 || start == 24*60:
			return invalid(f+".start", "must be a time HH:MM from 00:00 to 23:59")
		case end < 0:
			return invalid(f+".end", "must be a time HH:MM from 00:01 to 24:00")
		case end <= start:
			return invalid(f, "must end after it starts (a period across midnight is two windows)")
		}
		if pr := checkLen(f+".days", len(win.Days), 7, "day", "days"); pr != nil {
			return pr
		}
		seen := [7]bool{}
		for j, d := range win.Days {
			k := dayIndex(d)
			if k < 0 {
				return invalid(f+".days["+strconv.Itoa(j)+"]", "must be one of mon tue wed thu fri sat sun")
			}
			if seen[k] {
				return invalid(f+".days", "names "+d+" twice")
			}
			seen[k] = true
			for _, o := range week[k] {
				if start < o.end && o.start < end {
					return invalid(f, "overlaps time_window.windows["+strconv.Itoa(o.index)+"] on "+d)
				}
			}
			week[k] = append(week[k], span{start, end, i})
		}
		slices.SortFunc(win.Days, func(a, b string) int { return dayIndex(a) - dayIndex(b) })
	}
	return nil
}

// checkLen checks the length n of a list: at least one item (QWED-REQ-002),
// at most limit (QWED-REQ-004).
func checkLen(field string, n, limit int, one, many string) *Problem {
	if n == 0 {
		return problem(CodeMissingField, field, field+" needs at least one "+one)
	}
	if n > limit {
		return tooMany(field, n, limit, many)
	}
	return nil
}

// span is a window of one day in minutes after midnight, and its index.
type span struct{ start, end, index int }
