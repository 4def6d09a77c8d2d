package sql

import (
	"slices"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// tautologyVectors are, per dialect, conditions the engine folds to
// always true (QWED protocol v1.0 §5.2.5: an OR with an always-true
// operand is an injection pattern) and their near misses, which it must
// not flag: a false comparison, or one whose value depends on something
// the engine does not know (a collation, a server setting, a volatile
// function, two parameters).
var tautologyVectors = map[string]struct{ always, not []string }{
	DialectPostgres: {
		always: []string{
			"name LIKE '%'", "name ILIKE '%%'", "name SIMILAR TO '%'", "name LIKE name",
			"chr(49) = chr(49)", "chr(49) = '1'", "'a' LIKE 'a'", "'ab' LIKE 'a%'", "'A' ILIKE 'a'",
			"'a_c' LIKE 'a\\_c'", "'a%' LIKE 'a#%' ESCAPE '#'",
			"1 IN (1)", "2 BETWEEN 1 AND 3", "NOT false", "'1' = '1' COLLATE \"C\"",
			"concat('a', 'b') = 'ab'", "concat('a', NULL, 'b') = 'ab'", "0x31 = 0x31", "x'31' = x'31'",
			"x'31' = b'00110001'", "coalesce(1) = 1", "coalesce(NULL, 1) = 1", "nullif(1, 2) = 1",
			"x IS NOT NULL OR x IS NULL", "lower('A') = 'a'", "upper(name) = upper(name)",
			"md5('a') = md5('a')", "name || 'x' = name || 'x'", "$1 = $1",
			"ascii('a') = 97", "length('abc') = 3",
			"1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+" +
				"1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1 = 70",
		},
		not: []string{
			"name LIKE 'a%'", "name LIKE '_%'", "chr(49) = chr(50)", "'a' LIKE 'b'", "'A' LIKE 'a'", "1 IN (2)",
			"5 BETWEEN 1 AND 3", "concat('a', 'b') = 'ba'", "0x31 = 0x32", "x'31' = b'0011000'",
			"coalesce(NULL, 0) = 1", "x IS NULL OR y IS NOT NULL", "random() = random()", "$1 = $2",
			"'a' = 'A' COLLATE \"und-x-icu\"", "'a' <> 'A' COLLATE \"und-x-icu\"", "chr(233) = chr(233) || ''",
			"name LIKE '%' ESCAPE '%'", "nullif(1, 1) = 1", "'a '::bpchar <> 'a'", "length('é') = 2",
			"ascii('é') = 233",
			"NULL = NULL", "'a\\%' LIKE 'a\\%'", "NULL LIKE NULL",
		},
	},
	DialectMySQL: {
		always: []string{
			"name LIKE '%'", "name LIKE name", "CHAR(49) = CHAR(49)", "CHAR(49) = '1'", "'a' LIKE 'a'",
			"'ab' LIKE 'a%'", "1 IN (1)", "NOT 0", "2 BETWEEN 1 AND 3", "'1' = '1' COLLATE utf8mb4_bin",
			"CONCAT('a', 'b') = 'ab'", "0x31 = 0x31", "0x31 = '1'", "0x31 = 49", "X'31' = b'00110001'",
			"IFNULL(NULL, 1)", "COALESCE(1)", "x IS NOT NULL OR x IS NULL", "md5('a') = md5('a')",
			"IF(1, 1, 0)", "LOWER('A') = 'a'", "1/4 = 0.25", "name LIKE 0x25", "_binary'a' <> 'A'",
			"ASCII('a') = 97", "ORD('1') = 49", "LENGTH('abc') = 3", "NULLIF(1, 2) = 1", "lower(name) <=> lower(name)",
		},
		not: []string{
			"name LIKE 'a%'", "name LIKE '_%'", "CHAR(49) = CHAR(50)", "'a' LIKE 'b'", "1 IN (2)", "NOT 1",
			"5 BETWEEN 1 AND 3", "CONCAT('a', 'b') = 'ba'", "0x31 = 0x32", "0x31 = 1", "IFNULL(NULL, 0)",
			"x IS NULL OR y IS NOT NULL", "RAND() = RAND()", "? = ?", "LENGTH('é') = 1", "ASCII('') = 1", "'a' = 'a '", "'é' <> 'e'", "1/3 <> 0.3333",
			"'1' = '2' COLLATE utf8mb4_bin", "'a' <> 'A' COLLATE utf8mb4_bin", "CHAR(65) = 'a'", "0x41",
			"name LIKE '%' ESCAPE '%'", "CHAR(49 USING utf8mb4) = '1'", "'{' > 'a'", "_binary'a' = 'A'", "NULL = NULL", "_binary'é' LIKE '_'",
			"NULL LIKE NULL",
		},
	},
	DialectSQLite: {
		always: []string{
			"name LIKE '%'", "name GLOB '*'", "name LIKE name", "char(49) = char(49)", "char(49) = '1'",
			"'a' LIKE 'a'", "'ab' GLOB 'a*'", "1 IN (1)", "NOT 0", "2 BETWEEN 1 AND 3",
			"'1' = '1' COLLATE NOCASE", "concat('a', 'b') = 'ab'", "'a' || 'b' = 'ab'", "x'31' = x'31'", "x'31' <> '1'", "x'31' > 99",
			"ifnull(NULL, 1)", "coalesce(1)", "x IS NOT NULL OR x IS NULL", "x NOTNULL OR x ISNULL",
			"iif(1, 1, 0)", "lower('A') = 'a'", "upper(name) = upper(name)", "?1 = ?1",
			"unicode('a') = 97", "length('abc') = 3",
		},
		not: []string{
			"name LIKE 'a%'", "name LIKE '_%'", "char(49) = char(50)", "'a' LIKE 'b'", "'a' LIKE 'A'",
			"'a' GLOB 'A'", "1 IN (2)", "NOT 1", "5 BETWEEN 1 AND 3", "concat('a', 'b') = 'ba'",
			"x'31' = '1'", "ifnull(NULL, 0)", "x IS NULL OR y IS NOT NULL", "random() = random()", "? = ?",
			"'a' = 'A' COLLATE NOCASE", "5/2 = 2.5", "NULL = NULL",
			"NULL LIKE NULL", "1/0 = 1/0", "name GLOB name", "name REGEXP name",
		},
	},
}

// TestQWEDProtocol_5_2_5_Tautology_Folded pins the constant folding of the
// tautology checks in each dialect: LIKE '%', CHAR(49)=CHAR(49) and their
// kin an attacker tries after OR 1=1 are always true, so an OR with one is
// an injection (BLOCKED, QWED-SEC-002), and a DELETE whose WHERE is one is
// unbounded (critical), as for 1=1.
func TestQWEDProtocol_5_2_5_Tautology_Folded(t *testing.T) {
	for _, d := range Dialects() {
		for _, cond := range tautologyVectors[d].always {
			q := "SELECT id FROM orders WHERE id = 5 OR " + cond
			o := verify(t, q, map[string]any{"dialect": d})
			if o.Status != engines.Blocked || o.Err == nil || o.Err.Code != CodeMalicious ||
				!slices.ContainsFunc(o.Findings, func(f engines.Finding) bool { return f.Rule == "sql.tautology" }) {
				t.Errorf("%s %q: %s %+v findings %+v, want BLOCKED with sql.tautology", d, q, o.Status, o.Err, o.Findings)
				continue
			}
			if r := result(t, o); !slices.Contains(r.ChecksFailed, CheckNoInjection) {
				t.Errorf("%s %q: checks_failed %v", d, q, r.ChecksFailed)
			}
			del := "DELETE FROM orders WHERE " + cond
			c, p := classify(del, &options{dialect: d, sensitiveColumns: newWordList(SensitiveColumns, nil),
				sensitiveTables: newWordList(SensitiveTables, nil)})
			if p != nil || c.StatementClass != "unbounded_write" || c.Risk != RiskCritical {
				t.Errorf("%s %q: %+v %s %s, want an unbounded write", d, del, p, c.StatementClass, c.Risk)
			}
		}
	}
}

// TestQWEDProtocol_5_2_5_Tautology_NotFlagged pins the near misses: a
// condition that is false, or whose value the engine cannot know for
// certain, keeps the answer a plain condition gets (VERIFIED, no finding):
// the engine never calls a condition always true on a guess.
func TestQWEDProtocol_5_2_5_Tautology_NotFlagged(t *testing.T) {
	for _, d := range Dialects() {
		for _, cond := range tautologyVectors[d].not {
			q := "SELECT id FROM orders WHERE id = 5 OR " + cond
			o := verify(t, q, map[string]any{"dialect": d})
			if o.Status != engines.Verified || len(o.Findings) != 0 {
				t.Errorf("%s %q: %s %+v findings %+v, want VERIFIED without a finding", d, q, o.Status, o.Err, o.Findings)
			}
		}
	}
}
