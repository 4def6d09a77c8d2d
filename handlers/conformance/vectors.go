package conformance

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

//go:embed vectors/v1.json
var vectorFiles embed.FS

// Level is a conformance level of QWED protocol v1.0 §11.1.
type Level string

// The levels of §11.1, lowest first; None is reported when not even Basic
// is reached.
const (
	None     Level = "none"
	Basic    Level = "basic"
	Standard Level = "standard"
	Full     Level = "full"
)

// Levels are the levels of §11.1 in order, lowest first.
var Levels = []Level{Basic, Standard, Full}

// ParseLevel reads a level name (case-insensitive): basic, standard or full.
func ParseLevel(s string) (Level, error) {
	l := Level(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(Levels, l) {
		return "", fmt.Errorf("parsing level %q: want basic, standard or full", s)
	}
	return l, nil
}

// Groups of vectors: what a vector checks, which decides how its response
// is judged.
const (
	GroupFormat      = "format"      // §5/§6 request and response format (Basic)
	GroupEngine      = "engine"      // one engine of §4.1 answers (Standard)
	GroupEngines     = "engines"     // the engines listing, §4.2 documents (Standard, optional route)
	GroupStatus      = "status"      // a status of §6.2 with its HTTP code (Standard)
	GroupError       = "error"       // an error code of §8.3 (Standard)
	GroupDSL         = "dsl"         // the QWED-Logic DSL of §7 (Full)
	GroupAttestation = "attestation" // include_attestation (Full)
	GroupBatch       = "batch"       // §5.3 / §6.4 (Full)
)

// Vector is one request of the conformance suite and what its answer must
// be. Vectors are data (vectors/v1.json); Validate holds their invariants.
type Vector struct {
	// ID names the vector: its level, a slash, a short name.
	ID string `json:"id"`
	// Section names the protocol sections it tests ("§5.2.1 §6.1").
	Section string `json:"section"`
	// Level is the §11.1 level the vector counts for.
	Level Level `json:"level"`
	// Group is one of the Group constants.
	Group string `json:"group"`
	// Engine is the engine id the vector exercises, if any.
	Engine string `json:"engine,omitempty"`
	// Method and Path default to POST /verify.
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Auth is "" (send the API key), "none" (send none) or "wrong" (send
	// a key no server issued). The latter two need an API key to be
	// configured, else the vector is skipped: without a key the server is
	// taken to not require one (§3.3: authentication is
	// implementation-defined).
	Auth string `json:"auth,omitempty"`
	// Body is the JSON body; Raw, when set, is sent instead, as is (for
	// malformed documents).
	Body json.RawMessage `json:"body,omitempty"`
	Raw  string          `json:"raw,omitempty"`
	// Candidates are the bodies of a status vector, tried in order: the
	// vector passes when one produces the expected answer (how a status
	// is triggered depends on an implementation's engines).
	Candidates []json.RawMessage `json:"candidates,omitempty"`
	// PadQuery, when positive, replaces the body's query with that many
	// "1" characters (the length vectors).
	PadQuery int `json:"pad_query,omitempty"`
	// Optional vectors test a route the protocol does not define: a 404
	// or 405 skips them.
	Optional bool `json:"optional,omitempty"`
	// Expect is what the answer must be.
	Expect Expect `json:"expect"`
}

// Expect is the expected answer of a vector. Zero fields are not checked.
type Expect struct {
	// HTTP is the expected status code.
	HTTP int `json:"http,omitempty"`
	// Status lists the accepted protocol statuses (§6.2).
	Status []string `json:"status,omitempty"`
	// ErrorCode is the expected error.code (§8.3).
	ErrorCode string `json:"error_code,omitempty"`
	// Result holds values the response's result object must carry.
	Result map[string]any `json:"result,omitempty"`
	// ResultKeys must be present in the result object.
	ResultKeys []string `json:"result_keys,omitempty"`
	// DetailsKeys must be present in error.details (§8.4).
	DetailsKeys []string `json:"details_keys,omitempty"`
	// Items are the expected statuses of a batch's items, "" for any.
	Items []string `json:"items,omitempty"`
}

// suite is the document of vectors/v1.json.
type suite struct {
	Protocol string   `json:"protocol"`
	Vectors  []Vector `json:"vectors"`
}

// Vectors returns the embedded vector set, in file order (Basic, then
// Standard, then Full). It panics if the embedded file is invalid, which
// the package's tests rule out.
func Vectors() []Vector {
	b, err := vectorFiles.ReadFile("vectors/v1.json")
	if err != nil {
		panic(err)
	}
	vs, err := ParseVectors(b)
	if err != nil {
		panic(err)
	}
	return vs
}

// ParseVectors decodes a vector document (unknown fields refused) and
// checks it with Validate.
func ParseVectors(b []byte) ([]Vector, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s suite
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("decoding vectors: %w", err)
	}
	if err := Validate(s.Vectors); err != nil {
		return nil, err
	}
	return s.Vectors, nil
}

// Validate checks a vector set: unique ids prefixed by their level, a
// section naming the protocol, a known group, a body (or raw text) for
// every POST, and an expected HTTP code for every vector outside the
// format and engines groups (whose checks are the protocol's own rules).
func Validate(vs []Vector) error {
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.ID] {
			return fmt.Errorf("validating vectors: duplicate id %q", v.ID)
		}
		seen[v.ID] = true
		if !slices.Contains(Levels, v.Level) || !strings.HasPrefix(v.ID, string(v.Level)+"/") {
			return fmt.Errorf("validating vectors: %q: level %q must be basic, standard or full and prefix the id", v.ID, v.Level)
		}
		if !strings.HasPrefix(v.Section, "§") {
			return fmt.Errorf("validating vectors: %q names no protocol section", v.ID)
		}
		switch v.Group {
		case GroupFormat, GroupEngines:
		case GroupEngine, GroupStatus, GroupError, GroupDSL, GroupAttestation, GroupBatch:
			if v.Expect.HTTP == 0 {
				return fmt.Errorf("validating vectors: %q expects no HTTP code", v.ID)
			}
		default:
			return fmt.Errorf("validating vectors: %q: unknown group %q", v.ID, v.Group)
		}
		if (v.Group == GroupStatus) != (len(v.Candidates) > 0) {
			return fmt.Errorf("validating vectors: %q: candidates are for the status group, which needs them", v.ID)
		}
		if v.method() == "POST" && len(v.Body) == 0 && v.Raw == "" && len(v.Candidates) == 0 {
			return fmt.Errorf("validating vectors: %q posts no body", v.ID)
		}
		switch v.Auth {
		case "", "none", "wrong":
		default:
			return fmt.Errorf("validating vectors: %q: auth %q must be empty, none or wrong", v.ID, v.Auth)
		}
	}
	return nil
}

func (v Vector) method() string {
	if v.Method == "" {
		return "POST"
	}
	return v.Method
}

func (v Vector) path() string {
	if v.Path == "" {
		return "/verify"
	}
	return v.Path
}

// body is the bytes the vector sends.
func (v Vector) body() ([]byte, error) {
	if v.Raw != "" {
		return []byte(v.Raw), nil
	}
	if v.PadQuery <= 0 {
		return v.Body, nil
	}
	var m map[string]any
	if err := json.Unmarshal(v.Body, &m); err != nil {
		return nil, fmt.Errorf("padding the query of %s: %w", v.ID, err)
	}
	m["query"] = strings.Repeat("1", v.PadQuery)
	return json.Marshal(m)
}
