package sql

import "github.com/agentgate/agentgate/domain/engines"

// The hard bounds of the engine. Beyond each, the query is refused with
// QWED-REQ-004 before (or instead of) being analysed.
const (
	// MaxQueryBytes is the longest query read (QWED protocol v1.0 §5.1).
	MaxQueryBytes = engines.MaxQueryBytes
	// MaxNesting bounds the nesting the query's tokens can build (brackets
	// plus chains of operators and keywords, counted conservatively from
	// the scanner's tokens before the parser runs). The C parser recurses
	// once per level and a C stack overflow would kill the process, so the
	// bound keeps it far below the stack (it overflows beyond ~20000 levels
	// on an 8 MiB stack, and Go's protobuf decoder refuses more than ~4000).
	MaxNesting = 1000
	// MaxNesting also bounds, in the MySQL and SQLite dialects, a chain of
	// operators at one bracket level (a+b+c..., a OR b OR c...): both
	// parsers build it as a left-deep tree, one level per operator.

	// MaxNodes bounds the parse tree's nodes (protobuf messages).
	MaxNodes = 200000
	// MaxSchemaDDLBytes bounds params.schema_ddl (as schemas/params/sql.json).
	MaxSchemaDDLBytes = 100000
	// MaxSchemaTables bounds the tables of params.schema_ddl.
	MaxSchemaTables = 2000
	// MaxFindingsPerRule bounds the findings of one rule in a result (the
	// first found are kept; the verdict depends on a rule being found,
	// not on how often): each finding costs a scan of the query for its
	// line and column.
	MaxFindingsPerRule = 32
	// MaxSensitiveNames bounds params.sensitive_columns and
	// params.sensitive_tables together.
	MaxSensitiveNames = 1000
)

// The policy limits: a query beyond one is FAILED (a finding, not an
// error). Params may set them between 0 and their hard maxima.
const (
	// DefaultMaxJoins is the default limit on joins (JOIN clauses plus
	// extra FROM items) over the whole query.
	DefaultMaxJoins = 16
	// MaxJoinsLimit is the largest max_joins params may set.
	MaxJoinsLimit = 256
	// DefaultMaxSubqueryDepth is the default limit on nested subqueries
	// (subqueries in expressions, derived tables and CTE bodies).
	DefaultMaxSubqueryDepth = 8
	// MaxSubqueryDepthLimit is the largest max_subquery_depth params may set.
	MaxSubqueryDepthLimit = 64
)
