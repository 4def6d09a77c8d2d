package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CSVHeader is the first line of the CSV form.
var CSVHeader = []string{"section", "index", "field", "type", "value"}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding report: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// WriteCSV writes the report as CSV holding exactly the data of its JSON
// form, one value per line: section is the report member (agent, summary,
// days, …), index the position in a list member ("" otherwise), field the
// path inside it (dotted, list positions in brackets), type one of
// string, number, bool, null, empty_list, empty_object, and value the
// value's text. ParseCSV turns it back into the JSON form.
func WriteCSV(w io.Writer, rep *Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encoding report: %w", err)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	f := &flattener{dec: dec, w: cw}
	if err := f.top(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	cw.Flush()
	return cw.Error()
}

type flattener struct {
	dec *json.Decoder
	w   *csv.Writer
}

func (f *flattener) top() error {
	if _, err := f.dec.Token(); err != nil { // {
		return err
	}
	for f.dec.More() {
		k, err := f.dec.Token()
		if err != nil {
			return err
		}
		section := k.(string)
		tok, err := f.dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok && d == '[' {
			n := 0
			for f.dec.More() {
				v, err := f.dec.Token()
				if err != nil {
					return err
				}
				if err := f.value(section, strconv.Itoa(n), "", v); err != nil {
					return err
				}
				n++
			}
			if _, err := f.dec.Token(); err != nil { // ]
				return err
			}
			if n == 0 {
				if err := f.w.Write([]string{section, "", "", "empty_list", ""}); err != nil {
					return err
				}
			}
			continue
		}
		if err := f.value(section, "", "", tok); err != nil {
			return err
		}
	}
	return nil
}

// value writes the value whose first token is tok at path.
func (f *flattener) value(section, index, path string, tok json.Token) error {
	row := func(typ, v string) error { return f.w.Write([]string{section, index, path, typ, v}) }
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := tok.(type) {
	case json.Delim:
		empty := true
		if v == '{' {
			for f.dec.More() {
				empty = false
				k, err := f.dec.Token()
				if err != nil {
					return err
				}
				t, err := f.dec.Token()
				if err != nil {
					return err
				}
				if err := f.value(section, index, join(k.(string)), t); err != nil {
					return err
				}
			}
		} else {
			for n := 0; f.dec.More(); n++ {
				empty = false
				t, err := f.dec.Token()
				if err != nil {
					return err
				}
				if err := f.value(section, index, fmt.Sprintf("%s[%d]", path, n), t); err != nil {
					return err
				}
			}
		}
		if _, err := f.dec.Token(); err != nil {
			return err
		}
		if empty {
			if v == '{' {
				return row("empty_object", "")
			}
			return row("empty_list", "")
		}
		return nil
	case string:
		return row("string", v)
	case json.Number:
		return row("number", v.String())
	case bool:
		return row("bool", strconv.FormatBool(v))
	case nil:
		return row("null", "")
	}
	return fmt.Errorf("unexpected JSON token %v", tok)
}

// ParseCSV reads the CSV form back into the generic JSON value of the
// report (maps, lists, json.Number, strings, bools, nil), so that it can
// be compared with the JSON form decoded the same way.
func ParseCSV(r io.Reader) (map[string]any, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(CSVHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading CSV header: %w", err)
	}
	if strings.Join(head, ",") != strings.Join(CSVHeader, ",") {
		return nil, fmt.Errorf("CSV header %v, want %v", head, CSVHeader)
	}
	out := map[string]any{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading CSV: %w", err)
		}
		section, index, field, typ, text := rec[0], rec[1], rec[2], rec[3], rec[4]
		var v any
		switch typ {
		case "string":
			v = text
		case "number":
			v = json.Number(text)
		case "bool":
			v = text == "true"
		case "null":
			v = nil
		case "empty_list":
			v = []any{}
		case "empty_object":
			v = map[string]any{}
		default:
			return nil, fmt.Errorf("CSV type %q", typ)
		}
		path := parsePath(field)
		if index != "" {
			n, err := strconv.Atoi(index)
			if err != nil {
				return nil, fmt.Errorf("CSV index %q", index)
			}
			path = append([]any{n}, path...)
		}
		if len(path) == 0 {
			out[section] = v
			continue
		}
		out[section] = set(out[section], path, v)
	}
}

// parsePath splits "a.b[2].c" into "a", "b", 2, "c".
func parsePath(s string) []any {
	var out []any
	for part := range strings.SplitSeq(s, ".") {
		if part == "" {
			continue
		}
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			num, after, _ := strings.Cut(rest, "]")
			n, _ := strconv.Atoi(num)
			out = append(out, n)
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return out
}

// set stores v at path inside cur (a map, a list or nil) and returns it.
func set(cur any, path []any, v any) any {
	if len(path) == 0 {
		return v
	}
	switch k := path[0].(type) {
	case string:
		m, _ := cur.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		m[k] = set(m[k], path[1:], v)
		return m
	case int:
		l, _ := cur.([]any)
		for len(l) <= k {
			l = append(l, nil)
		}
		l[k] = set(l[k], path[1:], v)
		return l
	}
	return cur
}
