package schemas

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentgate/agentgate/domain/strictjson"
)

// printer renders the validator's messages (English, as the library's own).
var printer = message.NewPrinter(language.English)

//go:embed *.json params/*.json gate
var files embed.FS

// The $id of each schema.
const (
	RequestID       = "https://qwed.ai/schemas/request/v1"
	BatchRequestID  = "https://qwed.ai/schemas/batch-request/v1"
	ResponseID      = "https://qwed.ai/schemas/response/v1"
	BatchResponseID = "https://qwed.ai/schemas/batch-response/v1"
	paramsIDPrefix  = "https://qwed.ai/schemas/params/"
)

// Engines are the engine ids that have a params schema (QWED protocol v1.0 §4.1).
var Engines = []string{"code", "fact", "image", "logic", "math", "reasoning", "sql", "stats"}

// Files returns the embedded schema files (read-only).
func Files() fs.FS { return files }

// Schema is one compiled schema; safe for concurrent use.
type Schema struct {
	id  string
	sch *jsonschema.Schema
	// shape is built once, by Shape.
	shape func() *strictjson.Shape
	// docs are the decoded schema documents by $id (for Keywords).
	docs map[string]any
}

// ID returns the schema's $id.
func (s *Schema) ID() string { return s.id }

var (
	compileOnce sync.Once
	compiled    map[string]*Schema
	compileErr  error
)

// compileAll compiles every embedded schema once.
func compileAll() (map[string]*Schema, error) {
	compileOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		var ids []string
		docs := map[string]any{}
		err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path.Ext(p) != ".json" || p == OpenAPIFile {
				return err
			}
			b, err := files.ReadFile(p)
			if err != nil {
				return err
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				return fmt.Errorf("decoding schema %s: %w", p, err)
			}
			m, _ := doc.(map[string]any)
			id, _ := m["$id"].(string)
			if id == "" {
				return fmt.Errorf("schema %s has no $id", p)
			}
			if err := c.AddResource(id, doc); err != nil {
				return fmt.Errorf("adding schema %s: %w", p, err)
			}
			ids = append(ids, id)
			docs[id] = doc
			return nil
		})
		if err != nil {
			compileErr = err
			return
		}
		out := make(map[string]*Schema, len(ids))
		for _, id := range ids {
			sch, err := c.Compile(id)
			if err != nil {
				compileErr = fmt.Errorf("compiling schema %s: %w", id, err)
				return
			}
			sc := &Schema{id: id, sch: sch, docs: docs}
			sc.shape = sync.OnceValue(func() *strictjson.Shape {
				return shapeOf(sch, map[*jsonschema.Schema]*strictjson.Shape{})
			})
			out[id] = sc
		}
		compiled = out
	})
	return compiled, compileErr
}

// Get returns the compiled schema with the given $id.
func Get(id string) (*Schema, error) {
	all, err := compileAll()
	if err != nil {
		return nil, err
	}
	s, ok := all[id]
	if !ok {
		return nil, fmt.Errorf("no schema %q", id)
	}
	return s, nil
}

// must returns a schema that is embedded in the binary: compiling it can
// only fail on a broken build, which TestSchemasCompile catches.
func must(id string) *Schema {
	s, err := Get(id)
	if err != nil {
		panic(err)
	}
	return s
}

// Request is the schema of a verification request (QWED protocol v1.0 §5.1).
func Request() *Schema { return must(RequestID) }

// BatchRequest is the schema of a batch request (QWED protocol v1.0 §5.3).
func BatchRequest() *Schema { return must(BatchRequestID) }

// Response is the schema of a verification response (QWED protocol v1.0 §6.1, §8.4).
func Response() *Schema { return must(ResponseID) }

// BatchResponse is the schema of a batch response (QWED protocol v1.0 §6.4).
func BatchResponse() *Schema { return must(BatchResponseID) }

// Params returns the schema of an engine's params (QWED protocol v1.0 §5.2), false
// for an engine id that has none.
func Params(engine string) (*Schema, bool) {
	s, err := Get(paramsIDPrefix + engine + "/v1")
	return s, err == nil
}

// Violation is one failed assertion of a schema: where in the document
// (a JSON pointer), which keyword failed (its location in the schema and
// the keyword itself) and why.
type Violation struct {
	// InstanceLocation is the JSON pointer of the offending value ("" for
	// the document itself).
	InstanceLocation string `json:"instance_location"`
	// KeywordLocation is the JSON pointer of the failing keyword in the
	// schema.
	KeywordLocation string `json:"keyword_location"`
	// Keyword is the failing keyword ("required", "maxLength", "enum", …).
	Keyword string `json:"keyword"`
	// Missing lists the missing members of a "required" violation, sorted.
	Missing []string `json:"missing,omitempty"`
	// Message is the validator's description.
	Message string `json:"message"`
}

// Decode decodes a JSON document the way the validator reads it: numbers
// as json.Number, so no precision is lost before a schema sees them. It
// refuses trailing data after the document.
func Decode(b []byte) (any, error) {
	r := bytes.NewReader(b)
	doc, err := jsonschema.UnmarshalJSON(r)
	if err != nil {
		return nil, err
	}
	if r.Len() > 0 && len(bytes.TrimSpace(b[len(b)-r.Len():])) > 0 {
		return nil, errors.New("trailing data after the JSON document")
	}
	return doc, nil
}

// Validate checks doc (as Decode returns it) against s and returns the
// violations, sorted; nil when doc is valid.
func (s *Schema) Validate(doc any) []Violation {
	return ViolationsOf(s.sch.Validate(doc))
}

// ViolationsOf flattens the error of a jsonschema validation into its
// violations, sorted and without repeats; nil for a nil error. An error
// that is not a *jsonschema.ValidationError is one violation with its
// message.
func ViolationsOf(err error) []Violation {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Keyword: "", Message: err.Error()}}
	}
	var out []Violation
	collect(ve, "", &out)
	slices.SortFunc(out, func(a, b Violation) int {
		if c := strings.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
			return c
		}
		if c := strings.Compare(a.KeywordLocation, b.KeywordLocation); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.CompactFunc(out, func(a, b Violation) bool {
		return a.InstanceLocation == b.InstanceLocation && a.KeywordLocation == b.KeywordLocation && a.Message == b.Message
	})
}

// ValidateJSON decodes b and validates it; a document that is not JSON is
// an error.
func (s *Schema) ValidateJSON(b []byte) ([]Violation, error) {
	doc, err := Decode(b)
	if err != nil {
		return nil, err
	}
	return s.Validate(doc), nil
}

// collect appends the leaves of the error tree rooted at e.
func collect(e *jsonschema.ValidationError, schemaURL string, out *[]Violation) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, schemaURL, out)
		}
		return
	}
	kw := e.ErrorKind.KeywordPath()
	v := Violation{
		InstanceLocation: pointer(e.InstanceLocation),
		KeywordLocation:  keywordLocation(e.SchemaURL, kw),
		Message:          e.Error(),
	}
	if len(kw) > 0 {
		v.Keyword = kw[len(kw)-1]
	}
	if r, ok := e.ErrorKind.(*kind.Required); ok {
		v.Missing = slices.Sorted(slices.Values(r.Missing))
	}
	v.Message = describe(e)
	*out = append(*out, v)
}

// describe is the validator's description of one leaf, without the
// location prefix the library adds.
func describe(e *jsonschema.ValidationError) string {
	return e.ErrorKind.LocalizedString(printer)
}

// keywordLocation is the schema-relative location of a keyword: the
// fragment of the absolute schema URL plus the keyword path.
func keywordLocation(schemaURL string, kw []string) string {
	frag := ""
	if i := strings.IndexByte(schemaURL, '#'); i >= 0 {
		frag = schemaURL[i+1:]
	}
	return frag + pointer(kw)
}

// pointer renders tokens as a JSON pointer (RFC 6901).
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}

// Shape is the strictjson shape of the documents s describes: each
// object's properties by name (a property spelled in another case is
// refused), closed where the schema sets additionalProperties to false,
// and the items of arrays (prefixItems aside). Every JSON document is
// still refused a repeated member name at any depth (domain/strictjson).
func (s *Schema) Shape() *strictjson.Shape { return s.shape() }

func shapeOf(s *jsonschema.Schema, done map[*jsonschema.Schema]*strictjson.Shape) *strictjson.Shape {
	if s == nil {
		return nil
	}
	if sh, ok := done[s]; ok {
		return sh
	}
	if s.Ref != nil && len(s.Properties) == 0 && s.Items2020 == nil {
		return shapeOf(s.Ref, done)
	}
	done[s] = nil // a reference back to s while it is built accepts anything
	var sh *strictjson.Shape
	switch {
	case len(s.Properties) > 0:
		members := make(map[string]*strictjson.Shape, len(s.Properties))
		for name, p := range s.Properties {
			members[name] = shapeOf(p, done)
		}
		sh = strictjson.Object(members, isFalse(s.AdditionalProperties))
	case s.Items2020 != nil:
		sh = strictjson.Array(shapeOf(s.Items2020, done))
	}
	done[s] = sh
	return sh
}

func isFalse(v any) bool {
	b, ok := v.(bool)
	return ok && !b
}
