package stats

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Limits on the table (each has a test on both sides).
const (
	// MaxTableBytes is the longest params.csv text, and the longest
	// params.table as JSON.
	MaxTableBytes = 4 << 20
	// MaxRows is the most data rows (the header excluded).
	MaxRows = 100_000
	// MaxColumns is the most columns.
	MaxColumns = 256
	// MaxCellBytes is the longest cell.
	MaxCellBytes = 4096
	// MaxGroups is the most groups a group-by claim may produce.
	MaxGroups = 10_000
)

// Table is a loaded table: a header of unique names and rows of trimmed
// cells, all of the header's width.
type Table struct {
	Header []string
	Rows   [][]string
}

// requestError is a bad request with its QWED protocol v1.0 §8 code.
type requestError struct {
	code    string
	msg     string
	details map[string]any
}

func (e *requestError) Error() string { return e.code + ": " + e.msg }

// ParseCSV reads CSV text with a header row (RFC 4180 via encoding/csv;
// every row has the header's width) within the table limits.
func ParseCSV(text string, delimiter rune) (*Table, error) {
	if len(text) > MaxTableBytes {
		return nil, &requestError{code: "QWED-REQ-004", msg: "params.csv is too long", details: map[string]any{"length": len(text), "limit": MaxTableBytes}}
	}
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = delimiter
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	var t Table
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			details := map[string]any{"field": "params.csv"}
			if errors.As(err, &pe) {
				details["line"] = pe.Line
				details["column"] = pe.Column
			}
			return nil, &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("reading params.csv: %v", err), details: details}
		}
		if t.Header == nil {
			if err := t.setHeader(rec); err != nil {
				return nil, err
			}
			continue
		}
		if err := t.addRow(rec); err != nil {
			return nil, err
		}
	}
	if t.Header == nil {
		return nil, &requestError{code: "QWED-REQ-001", msg: "params.csv has no header row", details: map[string]any{"field": "params.csv"}}
	}
	return &t, nil
}

func (t *Table) setHeader(rec []string) error {
	if len(rec) > MaxColumns {
		return &requestError{code: "QWED-REQ-004", msg: "the table has too many columns", details: map[string]any{"columns": len(rec), "limit": MaxColumns}}
	}
	seen := make(map[string]bool, len(rec))
	t.Header = make([]string, len(rec))
	for i, h := range rec {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if h == "" {
			return &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("header column %d has no name", i+1), details: map[string]any{"column": i + 1}}
		}
		if seen[h] {
			return &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("header names column %q twice", h), details: map[string]any{"column": i + 1}}
		}
		seen[h] = true
		t.Header[i] = h
	}
	return nil
}

func (t *Table) addRow(rec []string) error {
	if len(t.Rows) >= MaxRows {
		return &requestError{code: "QWED-REQ-004", msg: "the table has too many rows", details: map[string]any{"limit": MaxRows}}
	}
	if len(rec) != len(t.Header) {
		return &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("row %d has %d cells, the header %d", len(t.Rows)+1, len(rec), len(t.Header)), details: map[string]any{"row": len(t.Rows) + 1}}
	}
	row := make([]string, len(rec))
	for i, c := range rec {
		if len(c) > MaxCellBytes {
			return &requestError{code: "QWED-REQ-004", msg: fmt.Sprintf("row %d column %q: the cell is too long", len(t.Rows)+1, t.Header[i]), details: map[string]any{"row": len(t.Rows) + 1, "limit": MaxCellBytes}}
		}
		row[i] = strings.TrimSpace(c)
	}
	t.Rows = append(t.Rows, row)
	return nil
}

// ParseJSONTable reads params.table: an array of rows, the first the
// header; cells are strings, numbers (kept as their exact JSON text),
// booleans or null (a missing value).
func ParseJSONTable(raw json.RawMessage) (*Table, error) {
	if len(raw) > MaxTableBytes {
		return nil, &requestError{code: "QWED-REQ-004", msg: "params.table is too long", details: map[string]any{"length": len(raw), "limit": MaxTableBytes}}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var rows [][]any
	if err := dec.Decode(&rows); err != nil {
		return nil, &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("decoding params.table: %v", err), details: map[string]any{"field": "params.table"}}
	}
	if len(rows) == 0 {
		return nil, &requestError{code: "QWED-REQ-001", msg: "params.table has no header row", details: map[string]any{"field": "params.table"}}
	}
	var t Table
	for i, row := range rows {
		rec := make([]string, len(row))
		for j, cell := range row {
			switch v := cell.(type) {
			case nil:
			case string:
				if !utf8.ValidString(v) {
					return nil, &requestError{code: "QWED-REQ-001", msg: "params.table holds invalid UTF-8"}
				}
				rec[j] = v
			case json.Number:
				rec[j] = v.String()
			case bool:
				rec[j] = fmt.Sprint(v)
			default:
				return nil, &requestError{code: "QWED-REQ-001", msg: fmt.Sprintf("params.table row %d cell %d is not a string, number, boolean or null", i, j+1), details: map[string]any{"field": "params.table", "row": i, "column": j + 1}}
			}
		}
		var err error
		if i == 0 {
			err = t.setHeader(rec)
		} else {
			err = t.addRow(rec)
		}
		if err != nil {
			return nil, err
		}
	}
	return &t, nil
}

// column finds a column by exact name, then by a unique case-insensitive
// match.
func (t *Table) column(name string) (int, bool) {
	for i, h := range t.Header {
		if h == name {
			return i, true
		}
	}
	found := -1
	for i, h := range t.Header {
		if strings.EqualFold(h, name) {
			if found >= 0 {
				return -1, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// missing reports whether a cell is a missing value: empty, NA, N/A, NaN,
// null, None or "-".
func missing(cell string) bool {
	switch strings.ToLower(cell) {
	case "", "na", "n/a", "nan", "null", "none", "-":
		return true
	}
	return false
}
