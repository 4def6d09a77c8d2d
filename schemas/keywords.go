package schemas

import (
	"slices"
	"strings"
)

// annotations are the keywords that assert nothing about a document.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$defs": true, "title": true, "description": true,
	"examples": true, "default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	// format is an annotation in draft 2020-12 unless the vocabulary is
	// asserted, which these schemas do not.
	"format": true,
}

// Keywords returns, sorted, the assertion keywords s uses at any depth,
// references followed: what a document must satisfy besides being JSON.
// A reference to a definition named in opaque ("#/$defs/<name>" of any
// schema) is reported as "$ref" and not followed: the caller vouches for
// those definitions. It lets a transport tell whether its decoder
// already checks everything the schema asserts.
func (s *Schema) Keywords(opaque ...string) []string {
	w := keywordWalk{docs: s.docs, opaque: opaque, seen: map[string]bool{}, out: map[string]bool{}}
	if doc, ok := s.docs[s.id].(map[string]any); ok {
		w.node(s.id, doc)
	}
	out := make([]string, 0, len(w.out))
	for k := range w.out {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type keywordWalk struct {
	docs   map[string]any
	opaque []string
	seen   map[string]bool
	out    map[string]bool
}

// node records the keywords of one schema object of the document base.
func (w *keywordWalk) node(base string, n map[string]any) {
	for k, v := range n {
		if annotations[k] {
			continue
		}
		w.out[k] = true
		switch k {
		case "$ref":
			ref, _ := v.(string)
			w.ref(base, ref)
		case "properties", "patternProperties", "dependentSchemas":
			m, _ := v.(map[string]any)
			for _, c := range m {
				w.child(base, c)
			}
		case "allOf", "anyOf", "oneOf", "prefixItems":
			l, _ := v.([]any)
			for _, c := range l {
				w.child(base, c)
			}
		default:
			w.child(base, v)
		}
	}
}

// child walks v when it is a schema object (a boolean schema or a
// keyword's value that is not a schema is skipped).
func (w *keywordWalk) child(base string, v any) {
	if m, ok := v.(map[string]any); ok {
		w.node(base, m)
	}
}

// ref follows a reference: an absolute $id or "" for base, then a JSON
// pointer fragment.
func (w *keywordWalk) ref(base, ref string) {
	doc, frag, _ := strings.Cut(ref, "#")
	if doc == "" {
		doc = base
	}
	if name, ok := strings.CutPrefix(frag, "/$defs/"); ok && slices.Contains(w.opaque, name) {
		return
	}
	key := doc + "#" + frag
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	var n any = w.docs[doc]
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		m, _ := n.(map[string]any)
		n = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	if m, ok := n.(map[string]any); ok {
		w.node(doc, m)
	}
}
