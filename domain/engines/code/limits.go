package code

import "github.com/agentgate/agentgate/domain/engines"

// The engine's bounds (engines-common "Bounded"). Each has a test on both
// sides; crossing one is an ERROR outcome with QWED-REQ-004 and details
// {limit, max, found}, never a partial analysis.
const (
	// MaxCodeBytes is the longest source the engine reads.
	MaxCodeBytes = engines.MaxQueryBytes
	// MaxNodes bounds the syntax tree's size (every node, named or not).
	MaxNodes = 100000
	// MaxDepth bounds the syntax tree's nesting (the root is depth 0).
	MaxDepth = 400
	// MaxParseChecks bounds the parser's work: tree-sitter reports progress
	// every 100 parse operations and the parse is abandoned after this many
	// reports (a step budget, not a clock).
	MaxParseChecks = 200000
	// MaxSteps bounds the analyser's evaluation work (expression
	// evaluations, value-set merges, fix-point rounds).
	MaxSteps = 4000000
	// MaxValues bounds how many possible values one name or expression may
	// hold before it widens to "unknown".
	MaxValues = 8
	// MaxFoldedString bounds a constant-folded string (concatenation,
	// join, decoding); a longer result widens to "unknown".
	MaxFoldedString = 4096
	// MaxFixpointRounds bounds the rounds of the binding pass (aliases
	// defined after their use inside functions are found by re-running it).
	MaxFixpointRounds = 4
	// MaxPayloadDepth bounds how deep the analyser follows code hidden in
	// code: a string literal or a statically decoded payload passed to
	// exec/eval is parsed and analysed itself, to this nesting.
	MaxPayloadDepth = 2
	// MaxFindings bounds the findings reported; further ones are counted in
	// the result's findings_omitted.
	MaxFindings = 200
	// MaxSnippetBytes bounds a finding's snippet.
	MaxSnippetBytes = 120
)
