package openapi

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/schemas"
)

// componentsPrefix starts every $ref of the bundled document.
const componentsPrefix = "#/components/schemas/"

// Components returns the JSON Schemas of package schemas as the
// components.schemas of an OpenAPI 3.1 document, by name:
//
//   - every definition of gate/defs.v1.json under its own name (Decision,
//     DecisionReply, Error, ErrorReply, Approval, …);
//   - gate/commands/<name>.v1.json as <Name>Body (RegisterBody,
//     ActionVerifyBody, …): the body of the command's HTTP endpoint;
//   - gate/replies/<name>.v1.json that only refer to a definition are
//     that definition; the others (what a transport adds to the domain's
//     reply: the minted token, key or secret) are <Name>Response
//     (RegistrationResponse, KeyIssuedResponse, …);
//   - the QWED protocol's schemas as VerifyRequest, BatchVerifyRequest,
//     VerifyResponse, BatchVerifyResponse and <Engine>Params.
//
// $id and $schema are dropped (the document's dialect is 2020-12) and
// every $ref, absolute or local, is rewritten to "#/components/schemas/…",
// keeping the fragment below the component. ReplyComponent and
// CommandComponent name the component of a reply or command schema.
func Components() (map[string]any, error) {
	docs, err := readSchemas()
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // $id -> component name ("" for defs)
	out := map[string]any{}
	for id, d := range docs {
		if id == schemas.DefsID {
			names[id] = ""
			continue
		}
		names[id] = componentOf(id, d.doc)
	}
	add := func(name string, s any, base string) error {
		if _, dup := out[name]; dup {
			return fmt.Errorf("bundling schemas: two schemas are named %s", name)
		}
		r, err := rewrite(s, base, names)
		if err != nil {
			return fmt.Errorf("bundling schema %s: %w", name, err)
		}
		out[name] = r
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		d := docs[id]
		if id == schemas.DefsID {
			defs, _ := d.doc["$defs"].(map[string]any)
			for _, n := range slices.Sorted(maps.Keys(defs)) {
				if err := add(n, defs[n], id); err != nil {
					return nil, err
				}
			}
			continue
		}
		if isAlias(d.doc) {
			continue
		}
		s := maps.Clone(d.doc)
		delete(s, "$id")
		delete(s, "$schema")
		if err := add(names[id], s, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReplyComponent returns the component name of the reply schema
// gate/replies/<name>.v1.json.
func ReplyComponent(name string) (string, error) { return componentFor(schemas.ReplyBodyID(name)) }

// CommandComponent returns the component name of the command body schema
// gate/commands/<name>.v1.json.
func CommandComponent(name string) (string, error) { return componentFor(schemas.CommandBodyID(name)) }

func componentFor(id string) (string, error) {
	docs, err := readSchemas()
	if err != nil {
		return "", err
	}
	d, ok := docs[id]
	if !ok {
		return "", fmt.Errorf("no schema %s", id)
	}
	return componentOf(id, d.doc), nil
}

type schemaDoc struct {
	file string
	doc  map[string]any
}

// readSchemas reads every embedded schema of package schemas by $id.
func readSchemas() (map[string]schemaDoc, error) {
	out := map[string]schemaDoc{}
	err := fs.WalkDir(schemas.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" || p == schemas.OpenAPIFile {
			return err
		}
		b, err := fs.ReadFile(schemas.Files(), p)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("decoding schema %s: %w", p, err)
		}
		id, _ := m["$id"].(string)
		if id == "" {
			return fmt.Errorf("schema %s has no $id", p)
		}
		out[id] = schemaDoc{file: p, doc: m}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading schemas: %w", err)
	}
	return out, nil
}

// isAlias reports whether a schema document only refers to another
// (besides its annotations).
func isAlias(doc map[string]any) bool {
	for k := range doc {
		switch k {
		case "$schema", "$id", "$ref", "title", "description", "$comment":
		default:
			return false
		}
	}
	_, ok := doc["$ref"]
	return ok
}

// protocolNames are the component names of the QWED protocol's schemas.
var protocolNames = map[string]string{
	schemas.RequestID:       "VerifyRequest",
	schemas.BatchRequestID:  "BatchVerifyRequest",
	schemas.ResponseID:      "VerifyResponse",
	schemas.BatchResponseID: "BatchVerifyResponse",
}

// componentOf names the component of the schema with that $id.
func componentOf(id string, doc map[string]any) string {
	if n, ok := protocolNames[id]; ok {
		return n
	}
	if isAlias(doc) {
		ref, _ := doc["$ref"].(string)
		if i := strings.LastIndex(ref, "/$defs/"); i >= 0 {
			return ref[i+len("/$defs/"):]
		}
	}
	rest := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(id, schemas.GateIDPrefix), "https://qwed.ai/schemas/"), "/v1")
	kind, name, _ := strings.Cut(rest, "/")
	switch kind {
	case "commands":
		return pascal(name) + "Body"
	case "replies":
		return pascal(name) + "Response"
	case "params":
		return pascal(name) + "Params"
	}
	return pascal(strings.ReplaceAll(rest, "/", "-"))
}

// pascal turns a file name (a2a-message) into a component name
// (A2AMessage).
func pascal(s string) string {
	var sb strings.Builder
	for _, w := range strings.Split(s, "-") {
		switch w {
		case "a2a", "qwed", "sql":
			sb.WriteString(strings.ToUpper(w))
		default:
			if w != "" {
				sb.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
	}
	return sb.String()
}

// rewrite copies schema s of document base with every $ref rewritten to
// the bundle's components (names: $id -> component, "" for the defs).
func rewrite(s any, base string, names map[string]string) (any, error) {
	switch v := s.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if k == "$ref" {
				ref, _ := x.(string)
				r, err := rewriteRef(ref, base, names)
				if err != nil {
					return nil, err
				}
				out[k] = r
				continue
			}
			if k == "$id" || k == "$schema" {
				continue
			}
			r, err := rewrite(x, base, names)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			r, err := rewrite(x, base, names)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return s, nil
}

func rewriteRef(ref, base string, names map[string]string) (string, error) {
	doc, frag, _ := strings.Cut(ref, "#")
	if doc == "" {
		doc = base
	}
	name, ok := names[doc]
	if !ok {
		return "", fmt.Errorf("$ref %q: no schema %s", ref, doc)
	}
	if name == "" { // the shared definitions
		def, ok := strings.CutPrefix(frag, "/$defs/")
		if !ok {
			return "", fmt.Errorf("$ref %q: not a definition of %s", ref, doc)
		}
		return componentsPrefix + def, nil
	}
	return componentsPrefix + name + frag, nil
}
