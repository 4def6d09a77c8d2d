package sql

import (
	"slices"
	"strings"
)

// SensitiveColumns is the default list of sensitive column names. A column
// is sensitive when its name, split at '_', contains the words of an entry
// in a row: "password" matches password, user_password and password_hash;
// "api_key" matches api_key and stripe_api_key. Names compare in lower
// case. params.sensitive_columns adds entries; none can be removed.
var SensitiveColumns = []string{
	"password", "passwd", "pwd", "passphrase",
	"ssn", "social_security_number",
	"credit_card", "card_number", "cc_number", "cvv", "cvc",
	"token", "secret", "api_key", "apikey", "private_key",
	"iban", "bank_account", "account_number", "routing_number",
	"passport_number", "tax_id",
}

// SensitiveTables is the default list of tables whose SELECT * is a finding
// when no schema is given (with params.schema_ddl, a table is sensitive when
// one of its columns is). Matched like SensitiveColumns; params.sensitive_tables
// adds entries.
var SensitiveTables = []string{
	"users", "accounts", "credentials", "passwords", "secrets", "api_keys",
	"tokens", "sessions", "payments", "credit_cards",
}

// credentialCatalogs are the system catalogs that hold password hashes or
// connection credentials: reading one is a critical finding.
var credentialCatalogs = map[string]bool{
	"pg_shadow": true, "pg_authid": true, "pg_user_mapping": true, "pg_user_mappings": true,
}

// wordList is a list of names matched by consecutive '_'-separated words.
type wordList [][]string

func newWordList(defaults, extra []string) wordList {
	var l wordList
	seen := map[string]bool{}
	for _, group := range [][]string{defaults, extra} {
		for _, n := range group {
			n = strings.ToLower(strings.TrimSpace(n))
			if n == "" || seen[n] {
				continue
			}
			seen[n] = true
			l = append(l, strings.Split(n, "_"))
		}
	}
	return l
}

// match returns the entry name matches, or "".
func (l wordList) match(name string) string {
	words := strings.Split(strings.ToLower(name), "_")
	for _, e := range l {
		for i := 0; i+len(e) <= len(words); i++ {
			if slices.Equal(words[i:i+len(e)], e) {
				return strings.Join(e, "_")
			}
		}
	}
	return ""
}
