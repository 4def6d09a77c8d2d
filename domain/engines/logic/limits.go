package logic

import "github.com/agentgate/agentgate/domain/engines"

// The limits of the logic engine (QWED protocol v1.0 §7.6: bounded recursion depth,
// input length limits). Each is checked before any solver work, with
// QWED-REQ-004 (and the position where the limit was crossed) beyond it.
const (
	// MaxQueryBytes is the longest query (QWED protocol v1.0 §5.1).
	MaxQueryBytes = engines.MaxQueryBytes
	// MaxDepth is the deepest nesting of lists ("(" ... ")").
	MaxDepth = 64
	// MaxNodes is the most atoms and lists in one query.
	MaxNodes = 10000
	// MaxVariables is the most distinct variables (free, and bound by
	// FORALL/EXISTS, counted per binder) in one query.
	MaxVariables = 256
	// MaxNameBytes is the longest variable name.
	MaxNameBytes = 128
	// MaxNumberDigits is the most digits in one number literal.
	MaxNumberDigits = 100
	// MaxStringBytes is the longest string literal (between the quotes).
	MaxStringBytes = 4096
	// MaxRegexBytes is the longest MATCH pattern.
	MaxRegexBytes = 1024
	// MaxRegexRepeat is the largest bound of a {n} or {n,m} quantifier.
	MaxRegexRepeat = 1000
	// MaxRegexDepth is the deepest group nesting of a MATCH pattern.
	MaxRegexDepth = 32
	// MaxPowExponent is the largest exponent of POW (a literal natural
	// number: POW is repeated multiplication).
	MaxPowExponent = 64
	// MaxScriptBytes is the largest SMT-LIB2 script a query may translate
	// to (the translation is linear in the query with shared
	// subterms, so only adversarial input reaches it).
	MaxScriptBytes = 1 << 20
)
