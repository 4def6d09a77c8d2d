package domain

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The business registry (the Agent Policy Engine spec §3.1 "categories
// derived from business registration metadata"): CmdBusiness creates,
// updates or deletes a business. Businesses are principal-wide: on Kafka
// the change is decided on GlobalPartition and copied to every partition
// (global.go), so that every consumer's home partition knows them.

// Bounds of a business's members.
const (
	// MaxBusinessIDChars bounds a business ID.
	MaxBusinessIDChars = 128
	// MaxBusinessNameChars bounds a business name (characters).
	MaxBusinessNameChars = 256
	// MaxCategoryChars bounds one category.
	MaxCategoryChars = 64
	// MaxEndpointChars bounds an endpoint URL.
	MaxEndpointChars = 2048
)

// businessChange decides a CmdBusiness: the admin, or a principal (the
// owner of the business for an update or a delete).
func (d *decider) businessChange() *Event {
	r := d.cmd.Business
	if r == nil {
		return d.reject(missing("business"))
	}
	switch {
	case d.cmd.Principal != "":
	case d.cmd.TokenHash != "":
		return d.reject(Errorf(CodeForbidden, "an agent token cannot change the business registry: use a principal API key"))
	default:
		return d.reject(Errorf(CodeMissingAPIKey, "principal API key required"))
	}
	b := r.Business
	if err := checkBusinessID("business.id", b.ID); err != nil {
		return d.reject(err)
	}
	var cur *Business
	if d.s.Exec != nil {
		cur = d.s.Exec.Businesses[b.ID]
	}
	switch r.Op {
	case OpCreate:
		if cur != nil {
			return d.reject(Errorf(CodeConflict, "business '%s' already exists", b.ID))
		}
		if d.s.Exec != nil && len(d.s.Exec.Businesses) >= MaxBusinesses {
			return d.reject(fieldError(CodeInvalidRequest, "business", "the registry already holds %d businesses", MaxBusinesses))
		}
		if d.cmd.Principal != AdminPrincipal && d.ownedBusinesses(d.cmd.Principal) >= MaxBusinessesPerOwner {
			return d.reject(fieldError(CodeInvalidRequest, "business", "principal '%s' already owns %d businesses", d.cmd.Principal, MaxBusinessesPerOwner))
		}
		if err := checkBusiness(&b); err != nil {
			return d.reject(err)
		}
		b.Owner = d.cmd.Principal
	case OpUpdate, OpDelete:
		if cur == nil {
			return d.reject(unknownBusiness(b.ID))
		}
		if err := d.authPrincipal(cur.Owner); err != nil {
			return d.reject(err)
		}
		if r.Op == OpDelete {
			b = Business{ID: cur.ID}
			break
		}
		if err := checkBusiness(&b); err != nil {
			return d.reject(err)
		}
		b.Owner = cur.Owner
	case "":
		return d.reject(missing("business.op"))
	default:
		return d.reject(fieldError(CodeInvalidRequest, "business.op", "must be create, update or delete"))
	}
	d.ev.Type = EvBusinessChanged
	d.ev.Business = &b
	return d.ev
}

// ownedBusinesses counts the businesses of the registry owner owns (a
// count: independent of the map's order).
func (d *decider) ownedBusinesses(owner string) int {
	n := 0
	if d.s.Exec != nil {
		for _, b := range d.s.Exec.Businesses {
			if b.Owner == owner {
				n++
			}
		}
	}
	return n
}

// unknownBusiness is the QWED-EXEC-007 refusal of a business the registry
// does not hold.
func unknownBusiness(id string) *Error {
	return &Error{Code: CodeExecUnknownBusiness, Message: "Unknown business", Details: map[string]any{"business_id": id}}
}

// checkBusinessID checks an ID of the registry: 1 to MaxBusinessIDChars
// characters of [A-Za-z0-9._:-].
func checkBusinessID(field, id string) *Error {
	if id == "" {
		return missing(field)
	}
	if len(id) > MaxBusinessIDChars {
		return fieldError(CodeTooLong, field, "%s is longer than %d characters", field, MaxBusinessIDChars)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isIDByte(c) {
			return fieldError(CodeInvalidRequest, field, "may hold only the characters A-Z a-z 0-9 . _ : -")
		}
	}
	return nil
}

func isIDByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
}

// checkBusiness checks the members of a created or updated business and
// normalizes its categories (sorted).
func checkBusiness(b *Business) *Error {
	if b.Name == "" {
		return missing("business.name")
	}
	if utf8.RuneCountInString(b.Name) > MaxBusinessNameChars {
		return fieldError(CodeTooLong, "business.name", "business.name is longer than %d characters", MaxBusinessNameChars)
	}
	if !printable(b.Name) {
		return fieldError(CodeInvalidRequest, "business.name", "must be valid UTF-8 without control or format characters")
	}
	if len(b.Categories) > MaxBusinessCategories {
		return fieldError(CodeTooLong, "business.categories", "business.categories holds more than %d categories", MaxBusinessCategories)
	}
	cats := slices.Clone(b.Categories)
	if cats == nil {
		cats = []string{}
	}
	slices.Sort(cats)
	for i, c := range cats {
		if c == "" || len(c) > MaxCategoryChars {
			return fieldError(CodeInvalidRequest, "business.categories", "each category is 1 to %d characters", MaxCategoryChars)
		}
		for j := 0; j < len(c); j++ {
			if x := c[j]; !('a' <= x && x <= 'z' || '0' <= x && x <= '9' || x == '_' || x == '-') {
				return fieldError(CodeInvalidRequest, "business.categories", "category '%s' must be a lowercase token of [a-z0-9_-]", c)
			}
		}
		if i > 0 && cats[i-1] == c {
			return fieldError(CodeInvalidRequest, "business.categories", "category '%s' is listed twice", c)
		}
	}
	b.Categories = cats
	if b.Endpoint == "" {
		return missing("business.endpoint")
	}
	if err := checkEndpoint(b.Endpoint); err != nil {
		return err
	}
	if b.Currency == "" {
		return missing("business.currency")
	}
	if _, ok := currencyExponent(b.Currency); !ok {
		return fieldError(CodeInvalidRequest, "business.currency", "must be an ISO 4217 currency code (three upper-case letters)")
	}
	return nil
}

// checkEndpoint checks that u is an absolute http(s) URL: printable
// ASCII, a scheme of http or https, a host, no credentials and no
// fragment.
func checkEndpoint(u string) *Error {
	const field = "business.endpoint"
	if len(u) > MaxEndpointChars {
		return fieldError(CodeTooLong, field, "business.endpoint is longer than %d characters", MaxEndpointChars)
	}
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(u, "http://")
	}
	if !ok {
		return fieldError(CodeInvalidRequest, field, "must be an absolute http or https URL")
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c >= 0x7f || c == '#' {
			return fieldError(CodeInvalidRequest, field, "must be printable ASCII without white space or a fragment")
		}
	}
	host := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		host = rest[:i]
	}
	if host == "" || strings.HasPrefix(host, ":") {
		return fieldError(CodeInvalidRequest, field, "must name a host")
	}
	if strings.Contains(host, "@") {
		return fieldError(CodeInvalidRequest, field, "must not hold credentials")
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control or format
// characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// applyBusiness folds a business.changed event: a business without an
// endpoint is a deletion.
func applyBusiness(s *State, b *Business) {
	if b == nil {
		return
	}
	x := execState(s)
	if b.Endpoint == "" {
		delete(x.Businesses, b.ID)
		return
	}
	if x.Businesses == nil {
		x.Businesses = map[string]*Business{}
	}
	c := *b
	c.Categories = slices.Clone(b.Categories)
	x.Businesses[b.ID] = &c
}
