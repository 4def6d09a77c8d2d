package sql

import (
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// TestQWEDProtocol_5_2_5_OperatorChainBound pins the bound on operator
// chains, checked before any parser runs: the MySQL and SQLite parsers
// build a+b+c... and a OR b OR c... as left-deep trees, one level per
// operator, so a chain counts as nesting and is refused past MaxNesting
// with QWED-REQ-004, as PostgreSQL's 1+1+... is; a chain at the limit
// parses. Operands in brackets, MySQL's '--' without a blank (a minus
// twice, not a comment) and the code of an executable comment do not
// hide a chain.
func TestQWEDProtocol_5_2_5_OperatorChainBound(t *testing.T) {
	over := MaxNesting + 1
	chains := map[string][]string{
		DialectPostgres: {"SELECT 1" + strings.Repeat("+1", over), "SELECT 'a'" + strings.Repeat("||'a'", over)},
		DialectMySQL: {
			"SELECT 1" + strings.Repeat("+1", over),
			"SELECT id FROM t WHERE a" + strings.Repeat(" OR a", over),
			"SELECT id FROM t WHERE (a)" + strings.Repeat(" OR (a)", over),
			"SELECT id FROM t WHERE a" + strings.Repeat(" AND a", over),
			"SELECT id FROM t WHERE a" + strings.Repeat("||a", over),
			"SELECT id FROM t WHERE a" + strings.Repeat(" XOR a", over),
			"SELECT 1" + strings.Repeat("--1", over/2+1),
			"SELECT 1 /*! " + strings.Repeat("+1", over) + " */",
			"SELECT 1 /*M! " + strings.Repeat("+1", over) + " */",
			"SELECT id FROM t WHERE a" + strings.Repeat(" OR 1", over),
		},
		DialectSQLite: {
			"SELECT 1" + strings.Repeat("+1", over),
			"SELECT id FROM t WHERE a" + strings.Repeat(" OR a", over),
			"SELECT id FROM t WHERE (a)" + strings.Repeat(" OR (a)", over),
			"SELECT id FROM t WHERE a" + strings.Repeat(" AND a", over),
			"SELECT 'a'" + strings.Repeat("||'a'", over),
			"SELECT a" + strings.Repeat(" COLLATE nocase", over),
			"SELECT id FROM t WHERE a" + strings.Repeat(" OR 1", over),
		},
	}
	for _, d := range Dialects() {
		for _, q := range chains[d] {
			o := verify(t, q, map[string]any{"dialect": d})
			if o.Status != engines.Error || o.Err == nil || o.Err.Code != CodeTooLong || o.Err.Details["limit"] != MaxNesting {
				t.Errorf("%s %.50q: %s %+v, want ERROR %s", d, q, o.Status, o.Err, CodeTooLong)
			}
		}
	}
	for _, d := range []string{DialectMySQL, DialectSQLite} {
		for _, q := range []string{
			"SELECT 1" + strings.Repeat("+1", MaxNesting),
			"SELECT id FROM t WHERE (a" + strings.Repeat(" OR a", MaxNesting/2) + ") AND (a" + strings.Repeat(" OR a", MaxNesting/2) + ")",
			"SELECT " + strings.TrimSuffix(strings.Repeat("(a"+strings.Repeat("+a", 900)+"), ", 20), ", "),
		} {
			if o := verify(t, q, map[string]any{"dialect": d}); o.Status != engines.Verified {
				t.Errorf("%s %.50q: %s %+v, want VERIFIED", d, q, o.Status, o.Err)
			}
		}
	}
	// PostgreSQL keeps AND and OR lists flat: a long OR list is one level.
	q := "SELECT id FROM t WHERE a" + strings.Repeat(" OR a", 5000)
	if o := verify(t, q, nil); o.Status != engines.Verified {
		t.Errorf("postgresql OR list: %s %+v", o.Status, o.Err)
	}
}

// TestQWEDProtocol_5_2_5_FindingsPerRule pins MaxFindingsPerRule: an OR
// list of thousands of always-true operands is blocked with the first
// MaxFindingsPerRule findings of the rule, not one per operand.
func TestQWEDProtocol_5_2_5_FindingsPerRule(t *testing.T) {
	for _, d := range Dialects() {
		q := "SELECT id FROM t WHERE a = 1" + strings.Repeat(" OR 1=1", 450)
		o := verify(t, q, map[string]any{"dialect": d})
		if o.Status != engines.Blocked || len(o.Findings) == 0 || len(o.Findings) > MaxFindingsPerRule {
			t.Errorf("%s: %s, %d findings, want BLOCKED with 1..%d", d, o.Status, len(o.Findings), MaxFindingsPerRule)
		}
	}
}
