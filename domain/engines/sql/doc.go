// Package sql is the SQL verification engine of the QWED protocol (QWED protocol v1.0
// §4.1, §5.2.5): it reads a PostgreSQL query with the real PostgreSQL parser
// (pganalyze/pg_query_go, the PostgreSQL 17 grammar compiled in through cgo),
// a MySQL query (params.dialect "mysql") with the TiDB parser and an SQLite
// query ("sqlite") with meyer, a rendering of SQLite's own grammar (both pure
// Go; mysql.go, sqlite.go), and decides from the parse tree, never from the
// text:
//
//   - the statement class and its risk (docs/ARCHITECTURE.md, "Where the
//     specifications disagree"): a read-only SELECT is low; INSERT, MERGE, UPDATE or DELETE with a WHERE clause and CREATE
//     TABLE/INDEX/VIEW are high; UPDATE or DELETE without a WHERE clause (or
//     whose WHERE is always true), DROP, TRUNCATE, ALTER, GRANT, REVOKE,
//     CREATE ROLE/USER, COPY to or from a program or a server file, DO, CALL,
//     and calls of server-side file, process and network functions
//     (pg_read_file, lo_export, dblink, pg_terminate_backend, ...) are
//     critical; a statement the engine does not know is critical (fail
//     closed);
//   - stacked statements: more than one statement is a finding, and the worst
//     class wins; stacked statements of which one writes are an injection;
//   - tautologies: an operand of OR that is always true (OR 1=1, OR 'a'='a',
//     OR TRUE, OR x=x, OR 2>1, OR 1+1=2: comparisons folded exactly over
//     math/big; LIKE '%', CHAR(49)=CHAR(49), CONCAT, COALESCE, IFNULL,
//     hexadecimal literals, COLLATE, x IS NULL OR x IS NOT NULL, two
//     identical deterministic operands: constfold.go) anywhere in a WHERE,
//     HAVING or JOIN condition is an injection; a WHERE that is always true
//     as a whole makes an UPDATE or DELETE unbounded; what the engine
//     cannot know for certain (a collation, a server setting, a volatile
//     function) is never taken for true;
//   - comments: the parser drops them, so a statement hidden behind a comment
//     is seen as the database would see it;
//   - sensitive columns (SensitiveColumns, extended by params) read or
//     written, and SELECT * on a table that holds one;
//   - schema validation against params.schema_ddl, parsed with the same
//     parser (CREATE TABLE columns): unknown tables and columns, with their
//     name and position; aliases, qualified names, CTE names and derived
//     tables are resolved;
//   - complexity limits: statement bytes, parse-tree nodes and nesting
//     (operator chains included, counted before any parser runs; hard
//     bounds, QWED-REQ-004), joins and subquery depth (policy limits,
//     configurable in params up to hard maxima).
//
// Outcomes: VERIFIED, only when no check failed, with the statement class,
// risk, tables and columns read and written; BLOCKED (QWED-SEC-002) for
// injection patterns and server file/program access, and for a destructive
// statement, a sensitive column or stacked statements unless params.allow
// waives that check (the gate's verify_action does: it decides by the risk
// class); FAILED for schema violations and exceeded policy limits, with the
// reason; ERROR with QWED-REQ-003 {position, expected, found} for syntax
// errors, QWED-REQ-004 beyond a hard bound and QWED-REQ-001 for bad params;
// UNSUPPORTED for a dialect other than postgresql, mysql and sqlite.
//
// Classify is the same analysis without params, for the gate's risk of an
// execute_sql action.
//
// The engine is pure and deterministic: the parser is a C library that does
// no IO and keeps no state between calls; nothing here reads a clock or draws
// randomness, and every list in a result is sorted. Positions are 1-based
// character positions in the query, as PostgreSQL reports them (the
// cursorpos of a syntax error), with line and column alongside.
package sql
