package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
)

// Limits of the image engine (each has a test on both sides).
const (
	// MaxImageBytes is the largest decoded image accepted (QWED-REQ-004
	// beyond it); the base64 text is refused before decoding when it could
	// only decode to more.
	MaxImageBytes = 20 << 20
	// MaxPixels is the largest width*height accepted, read from the header
	// before anything else (QWED-REQ-004 beyond it).
	MaxPixels = 100_000_000
	// MaxClauses is the most clauses one claim may hold (QWED-REQ-004).
	MaxClauses = 32
	// MaxClaimTokens is the most tokens one claim may hold (QWED-REQ-004).
	MaxClaimTokens = 512
)

// Version is the engine version reported in its capabilities.
const Version = "1.0.0"

// Formats the engine identifies from the header.
const (
	FormatPNG  = "png"
	FormatJPEG = "jpeg"
	FormatGIF  = "gif"
	FormatWebP = "webp"
)

// Params are the image engine's parameters (QWED protocol v1.0 §5.2).
type Params struct {
	// Image is the image, base64-encoded (required).
	Image string `json:"image"`
}

// Header is what the engine reads from an image without decoding pixels.
type Header struct {
	Format    string `json:"format"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	SizeBytes int    `json:"size_bytes"`
}

// Check is one clause of the claim and how it was decided.
type Check struct {
	// Clause is the clause's text as the claim wrote it.
	Clause string `json:"clause"`
	// Property is width, height, format, size, dimensions, aspect_ratio,
	// pixels or orientation ("" when the clause is unsupported).
	Property string `json:"property,omitempty"`
	// Operator is =, !=, <, <=, > or >=.
	Operator string `json:"operator,omitempty"`
	// Claimed is the value the clause states.
	Claimed string `json:"claimed,omitempty"`
	// Measured is the image's value of the property.
	Measured string `json:"measured,omitempty"`
	// Verdict is "holds", "false" or "unsupported".
	Verdict string `json:"verdict"`
	// Reason says why an unsupported clause is unsupported.
	Reason string `json:"reason,omitempty"`
}

// Result is the engine-specific result (QWED protocol v1.0 §6.1 "result").
type Result struct {
	IsValid   bool    `json:"is_valid"`
	Format    string  `json:"format"`
	Width     int     `json:"width"`
	Height    int     `json:"height"`
	SizeBytes int     `json:"size_bytes"`
	Checks    []Check `json:"checks"`
	// Expected is the image's value for the first false clause (§6.3.2).
	Expected string `json:"expected,omitempty"`
	// Actual is the value the first false clause claimed (§6.3.2).
	Actual  string `json:"actual,omitempty"`
	Message string `json:"message"`
}

// Engine is the image engine; the zero value is ready to use.
type Engine struct{}

// New returns the image engine.
func New() engines.Engine { return Engine{} }

// Capabilities is the engine's capabilities document (QWED protocol v1.0 §4.2).
func (Engine) Capabilities() engines.Capabilities {
	return engines.Capabilities{
		EngineID: "image",
		Name:     "Image Verifier",
		Version:  Version,
		Capabilities: map[string]any{
			"formats":        []string{FormatGIF, FormatJPEG, FormatPNG, FormatWebP},
			"properties":     []string{"aspect_ratio", "dimensions", "format", "height", "orientation", "pixels", "size", "width"},
			"visual_content": false,
			"decodes_pixels": false,
		},
		InputTypes:  []string{"claim", "base64_image"},
		OutputTypes: []string{"verification_result", "computed_value", "proof"},
		Limits: map[string]int{
			"max_query_bytes":  engines.MaxQueryBytes,
			"max_image_bytes":  MaxImageBytes,
			"max_pixels":       MaxPixels,
			"max_clauses":      MaxClauses,
			"max_claim_tokens": MaxClaimTokens,
		},
		Params: json.RawMessage(`{"type":"object","required":["image"],"additionalProperties":false,"properties":{"image":{"type":"string","description":"the image, base64"}}}`),
	}
}

// Verify decides the claim in req.Query about the image in req.Params.
func (Engine) Verify(_ context.Context, req engines.Request) engines.Outcome {
	if len(req.Query) == 0 {
		return problem("QWED-REQ-002", "the query (the claim) is empty", nil)
	}
	if len(req.Query) > engines.MaxQueryBytes {
		return problem("QWED-REQ-004", "the query is too long", map[string]any{"length": len(req.Query), "limit": engines.MaxQueryBytes})
	}
	p, out, ok := decodeParams(req.Params)
	if !ok {
		return out
	}
	data, out, ok := decodeImage(p.Image)
	if !ok {
		return out
	}
	h, err := ReadHeader(data)
	if errors.Is(err, ErrUnknownFormat) {
		msg := "the claim is not decidable: " + err.Error()
		return engines.Outcome{Status: engines.Unsupported, Result: Result{Checks: []Check{}, Message: msg, SizeBytes: len(data)}, Err: &engines.Problem{Code: "QWED-REQ-005", Message: msg}}
	}
	if err != nil {
		var pe *headerError
		if errors.As(err, &pe) {
			return problem(pe.code, pe.msg, pe.details)
		}
		return problem("QWED-REQ-001", err.Error(), nil)
	}
	clauses, perr := parseClaim(req.Query)
	if perr != nil {
		return problem(perr.code, perr.msg, perr.details)
	}
	out = decide(h, clauses)
	if req.IncludeProof {
		out.Proof = headerProof(h, data)
	}
	return out
}

// Proof is the derivation returned when include_proof is set: which bytes
// the header values were read from, bound to the exact image by its
// digest, so that anyone holding the image can re-read them.
type Proof struct {
	Method string `json:"method"`
	// SHA256 is the hex SHA-256 of the decoded image bytes.
	SHA256 string `json:"sha256"`
	// Signature is the hex of the file's first bytes, which name the format.
	Signature string `json:"signature"`
	// Source names the header structure the dimensions come from.
	Source string `json:"source"`
	Header Header `json:"header"`
}

// headerSources names, per format, where ReadHeader reads the dimensions.
var headerSources = map[string]string{
	FormatPNG:  "PNG IHDR chunk (width and height, big-endian, at bytes 16..23)",
	FormatJPEG: "JPEG start-of-frame marker (SOFn: height then width, big-endian)",
	FormatGIF:  "GIF logical screen descriptor (width and height, little-endian, at bytes 6..9)",
	FormatWebP: "WebP VP8, VP8L or VP8X chunk of the RIFF container",
}

// headerProof is the Proof of h read from data.
func headerProof(h Header, data []byte) Proof {
	sum := sha256.Sum256(data)
	n := min(len(data), 12)
	return Proof{
		Method:    "header only: the format from the file signature, the dimensions from the format's header; no pixel is decoded",
		SHA256:    hex.EncodeToString(sum[:]),
		Signature: hex.EncodeToString(data[:n]),
		Source:    headerSources[h.Format],
		Header:    h,
	}
}

func problem(code, msg string, details map[string]any) engines.Outcome {
	return engines.Outcome{Status: engines.Error, Err: &engines.Problem{Code: code, Message: msg, Details: details}}
}

func decodeParams(raw json.RawMessage) (Params, engines.Outcome, bool) {
	var p Params
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return p, problem("QWED-REQ-002", "params.image is required", map[string]any{"field": "params.image"}), false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, problem("QWED-REQ-001", fmt.Sprintf("decoding params: %v", err), map[string]any{"field": "params"}), false
	}
	if dec.More() {
		return p, problem("QWED-REQ-001", "decoding params: trailing data after the object", map[string]any{"field": "params"}), false
	}
	if p.Image == "" {
		return p, problem("QWED-REQ-002", "params.image is required", map[string]any{"field": "params.image"}), false
	}
	return p, engines.Outcome{}, true
}

// maxEncodedBytes is the longest base64 text (without whitespace) that can
// decode to MaxImageBytes.
var maxEncodedBytes = base64.StdEncoding.EncodedLen(MaxImageBytes)

// DecodeBase64 decodes an image's base64 text: an optional data URL
// prefix, whitespace anywhere, the standard or URL alphabet, padding
// optional. It refuses text that could only decode to more than
// MaxImageBytes before decoding it.
func DecodeBase64(s string) ([]byte, error) {
	if strings.HasPrefix(s, "data:") {
		i := strings.Index(s, ",")
		if i < 0 || !strings.HasSuffix(s[:i], ";base64") {
			return nil, &headerError{code: "QWED-REQ-001", msg: "decoding base64: a data URL must be ;base64,", details: map[string]any{"field": "params.image"}}
		}
		s = s[i+1:]
	}
	clean := make([]byte, 0, min(len(s), maxEncodedBytes+1))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			if len(clean) > maxEncodedBytes {
				return nil, &headerError{code: "QWED-REQ-004", msg: "the image is too large", details: map[string]any{"limit_bytes": MaxImageBytes}}
			}
			clean = append(clean, c)
		}
	}
	if len(clean) > maxEncodedBytes {
		return nil, &headerError{code: "QWED-REQ-004", msg: "the image is too large", details: map[string]any{"limit_bytes": MaxImageBytes}}
	}
	if len(clean) == 0 {
		return nil, &headerError{code: "QWED-REQ-002", msg: "params.image is empty", details: map[string]any{"field": "params.image"}}
	}
	enc := base64.StdEncoding
	if bytes.ContainsAny(clean, "-_") {
		enc = base64.URLEncoding
	}
	if !bytes.HasSuffix(clean, []byte("=")) {
		enc = enc.WithPadding(base64.NoPadding)
	}
	out := make([]byte, enc.DecodedLen(len(clean)))
	n, err := enc.Decode(out, clean)
	if err != nil {
		details := map[string]any{"field": "params.image"}
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			details["position"] = int64(ce)
		}
		return nil, &headerError{code: "QWED-REQ-001", msg: fmt.Sprintf("decoding base64: %v", err), details: details}
	}
	if n > MaxImageBytes {
		return nil, &headerError{code: "QWED-REQ-004", msg: "the image is too large", details: map[string]any{"size_bytes": n, "limit_bytes": MaxImageBytes}}
	}
	return out[:n], nil
}

func decodeImage(s string) ([]byte, engines.Outcome, bool) {
	data, err := DecodeBase64(s)
	if err != nil {
		var he *headerError
		if errors.As(err, &he) {
			return nil, problem(he.code, he.msg, he.details), false
		}
		return nil, problem("QWED-REQ-001", err.Error(), nil), false
	}
	return data, engines.Outcome{}, true
}

// headerError is a request error with its QWED protocol v1.0 §8 code.
type headerError struct {
	code    string
	msg     string
	details map[string]any
}

func (e *headerError) Error() string { return e.code + ": " + e.msg }

// ErrUnknownFormat is returned by ReadHeader for bytes that are none of the
// recognised formats.
var ErrUnknownFormat = errors.New("unrecognised image format (png, jpeg, gif and webp are recognised)")

// ReadHeader identifies the format of data from its magic bytes and reads
// the width and height from the header only (image.DecodeConfig of the
// format's package, or the RIFF chunk header for webp). It refuses an
// image over MaxImageBytes or MaxPixels with a QWED-REQ-004 error, a
// broken header with QWED-REQ-001, and unknown bytes with ErrUnknownFormat.
func ReadHeader(data []byte) (Header, error) {
	if len(data) > MaxImageBytes {
		return Header{}, &headerError{code: "QWED-REQ-004", msg: "the image is too large", details: map[string]any{"size_bytes": len(data), "limit_bytes": MaxImageBytes}}
	}
	var (
		h   = Header{SizeBytes: len(data)}
		w   int
		ht  int
		err error
	)
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		h.Format = FormatPNG
		cfg, e := png.DecodeConfig(bytes.NewReader(data))
		w, ht, err = cfg.Width, cfg.Height, e
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		h.Format = FormatJPEG
		cfg, e := jpeg.DecodeConfig(bytes.NewReader(data))
		w, ht, err = cfg.Width, cfg.Height, e
	case bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")):
		h.Format = FormatGIF
		cfg, e := gif.DecodeConfig(bytes.NewReader(data))
		w, ht, err = cfg.Width, cfg.Height, e
	case len(data) >= 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		h.Format = FormatWebP
		w, ht, err = webpConfig(data)
	default:
		return Header{}, ErrUnknownFormat
	}
	if err != nil {
		return Header{}, &headerError{code: "QWED-REQ-001", msg: fmt.Sprintf("reading the %s header: %v", h.Format, err), details: map[string]any{"field": "params.image", "format": h.Format}}
	}
	if w <= 0 || ht <= 0 {
		return Header{}, &headerError{code: "QWED-REQ-001", msg: fmt.Sprintf("reading the %s header: empty image %dx%d", h.Format, w, ht), details: map[string]any{"field": "params.image", "format": h.Format}}
	}
	if int64(w)*int64(ht) > MaxPixels {
		return Header{}, &headerError{code: "QWED-REQ-004", msg: "the image has too many pixels", details: map[string]any{"width": w, "height": ht, "limit_pixels": MaxPixels}}
	}
	h.Width, h.Height = w, ht
	return h, nil
}

// webpConfig reads the canvas size of a webp file from its first chunk
// (VP8 lossy, VP8L lossless or VP8X extended).
func webpConfig(data []byte) (int, int, error) {
	if len(data) < 20 {
		return 0, 0, errors.New("truncated RIFF header")
	}
	fourcc := string(data[12:16])
	size := binary.LittleEndian.Uint32(data[16:20])
	chunk := data[20:]
	if uint64(size) < uint64(len(chunk)) {
		chunk = chunk[:size]
	}
	switch fourcc {
	case "VP8 ":
		if len(chunk) < 10 || chunk[3] != 0x9d || chunk[4] != 0x01 || chunk[5] != 0x2a {
			return 0, 0, errors.New("bad VP8 frame header")
		}
		w := int(binary.LittleEndian.Uint16(chunk[6:8]) & 0x3fff)
		h := int(binary.LittleEndian.Uint16(chunk[8:10]) & 0x3fff)
		return w, h, nil
	case "VP8L":
		if len(chunk) < 5 || chunk[0] != 0x2f {
			return 0, 0, errors.New("bad VP8L header")
		}
		bits := binary.LittleEndian.Uint32(chunk[1:5])
		return int(bits&0x3fff) + 1, int((bits>>14)&0x3fff) + 1, nil
	case "VP8X":
		if len(chunk) < 10 {
			return 0, 0, errors.New("bad VP8X header")
		}
		w := 1 + int(uint32(chunk[4])|uint32(chunk[5])<<8|uint32(chunk[6])<<16)
		h := 1 + int(uint32(chunk[7])|uint32(chunk[8])<<8|uint32(chunk[9])<<16)
		return w, h, nil
	default:
		return 0, 0, fmt.Errorf("unknown first chunk %q", fourcc)
	}
}
