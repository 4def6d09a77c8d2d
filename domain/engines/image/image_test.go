package image

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	stdimage "image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

func encodePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := stdimage.NewGray(stdimage.Rect(0, 0, w, h))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodeJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := stdimage.NewRGBA(stdimage.Rect(0, 0, w, h))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodeGIF(t testing.TB, w, h int) []byte {
	t.Helper()
	img := stdimage.NewPaletted(stdimage.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	var buf bytes.Buffer
	if err := gif.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// webpVP8X builds the header of an extended webp file of w x h.
func webpVP8X(w, h int) []byte {
	chunk := make([]byte, 10)
	w1, h1 := w-1, h-1
	chunk[4], chunk[5], chunk[6] = byte(w1), byte(w1>>8), byte(w1>>16)
	chunk[7], chunk[8], chunk[9] = byte(h1), byte(h1>>8), byte(h1>>16)
	return riff("VP8X", chunk)
}

// webpVP8L builds the header of a lossless webp file of w x h.
func webpVP8L(w, h int) []byte {
	chunk := make([]byte, 5)
	chunk[0] = 0x2f
	binary.LittleEndian.PutUint32(chunk[1:], uint32(w-1)|uint32(h-1)<<14)
	return riff("VP8L", chunk)
}

// webpVP8 builds the header of a lossy webp file of w x h.
func webpVP8(w, h int) []byte {
	chunk := []byte{0, 0, 0, 0x9d, 0x01, 0x2a, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(chunk[6:], uint16(w))
	binary.LittleEndian.PutUint16(chunk[8:], uint16(h))
	return riff("VP8 ", chunk)
}

func riff(fourcc string, chunk []byte) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(4+8+len(chunk)))
	b.WriteString("WEBP")
	b.WriteString(fourcc)
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(chunk)))
	b.Write(chunk)
	return b.Bytes()
}

// pngHeader is a PNG signature and IHDR chunk of w x h (no pixel data):
// enough for DecodeConfig.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 0 // 8-bit greyscale
	_ = binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	crc := crc32.NewIEEE()
	crc.Write([]byte("IHDR"))
	crc.Write(ihdr)
	b.WriteString("IHDR")
	b.Write(ihdr)
	_ = binary.Write(&b, binary.BigEndian, crc.Sum32())
	return b.Bytes()
}

func params(data []byte) json.RawMessage {
	p, _ := json.Marshal(Params{Image: base64.StdEncoding.EncodeToString(data)})
	return p
}

func verify(query string, p json.RawMessage) engines.Outcome {
	return New().Verify(context.Background(), engines.Request{Query: query, Type: "image", Params: p})
}

// TestSeed002_4_1_ImageClaims pins the image engine's decisions on
// deterministic header claims (QWED protocol v1.0 §4.1, issue 4).
func TestSeed002_4_1_ImageClaims(t *testing.T) {
	png640 := encodePNG(t, 640, 480)
	jpg := encodeJPEG(t, 320, 240)
	gf := encodeGIF(t, 100, 100)
	tall := encodePNG(t, 90, 160)
	cases := []struct {
		name   string
		data   []byte
		query  string
		status engines.Status
		expect string // Result.Expected for FAILED
	}{
		{"png of 640x480", png640, "the image is a PNG of 640x480", engines.Verified, ""},
		{"width is", png640, "width is 640", engines.Verified, ""},
		{"height =", png640, "height = 480", engines.Verified, ""},
		{"height wrong", png640, "height = 400", engines.Failed, "480"},
		{"format is jpeg on png", png640, "format is jpeg", engines.Failed, "png"},
		{"format jpg alias", jpg, "format is jpg", engines.Verified, ""},
		{"jpeg dims", jpg, "a 320 x 240 jpeg", engines.Verified, ""},
		{"gif square", gf, "the image is a square GIF", engines.Verified, ""},
		{"size under 2 MB", png640, "size is under 2 MB", engines.Verified, ""},
		{"size over 2 MB", png640, "file size > 2 MB", engines.Failed, ""},
		{"size exact bytes", png640, "size is " + itoa(len(png640)) + " bytes", engines.Verified, ""},
		{"size off by one byte", png640, "size is " + itoa(len(png640)+1) + " bytes", engines.Failed, ""},
		{"aspect 4:3", png640, "aspect ratio is 4:3", engines.Verified, ""},
		{"aspect 16/9 false", png640, "aspect ratio = 16/9", engines.Failed, "4:3"},
		{"aspect decimal rounds", png640, "aspect ratio is 1.33", engines.Verified, ""},
		{"aspect decimal too precise", png640, "aspect ratio is 1.3334", engines.Failed, "4:3"},
		{"landscape", png640, "the image is landscape", engines.Verified, ""},
		{"portrait", tall, "orientation is portrait", engines.Verified, ""},
		{"portrait false", png640, "it is portrait", engines.Failed, "landscape"},
		{"width at least", png640, "width is at least 600 and height is at most 480", engines.Verified, ""},
		{"width not less than false", png640, "width is not less than 641", engines.Failed, "640"},
		{"pixels wide", png640, "640 pixels wide", engines.Verified, ""},
		{"pixel count", png640, "has 307200 pixels", engines.Verified, ""},
		{"not a png", png640, "the image is not a PNG", engines.Failed, "png"},
		{"bmp claim false", png640, "format is bmp", engines.Failed, "png"},
		{"webp VP8X", webpVP8X(1920, 1080), "a webp of 1920x1080", engines.Verified, ""},
		{"webp VP8L", webpVP8L(17, 33), "width is 17 and height is 33 and format is webp", engines.Verified, ""},
		{"webp VP8", webpVP8(800, 600), "dimensions are 800x600", engines.Verified, ""},
		{"colour unsupported", png640, "the image is red", engines.Unsupported, ""},
		{"objects unsupported", png640, "a PNG of a cat", engines.Unsupported, ""},
		{"text unsupported", png640, "the image contains the text hello", engines.Unsupported, ""},
		{"false beats unsupported", png640, "width is 10 and the image shows a dog", engines.Failed, "640"},
		{"bare number unsupported", png640, "the image is 640", engines.Unsupported, ""},
		{"format with < unsupported", png640, "format > png", engines.Unsupported, ""},
		{"two properties unsupported", png640, "width height 640", engines.Unsupported, ""},
		{"size as dims", png640, "size is 640x480", engines.Verified, ""},
		{"KiB rounding", png640, "size is at most 100 KiB", engines.Verified, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := verify(tc.query, params(tc.data))
			if out.Status != tc.status {
				t.Fatalf("status %s, want %s (result %+v, err %+v)", out.Status, tc.status, out.Result, out.Err)
			}
			res, ok := out.Result.(Result)
			if !ok {
				t.Fatalf("result %T", out.Result)
			}
			if res.IsValid != (tc.status == engines.Verified) {
				t.Fatalf("is_valid %v with status %s", res.IsValid, out.Status)
			}
			if tc.expect != "" && res.Expected != tc.expect {
				t.Fatalf("expected %q, want %q", res.Expected, tc.expect)
			}
			if tc.status == engines.Unsupported && (out.Err == nil || !strings.Contains(res.Message, "not decidable")) {
				t.Fatalf("unsupported without reason: %+v", out)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestSeed002_8_3_ImageRequestErrors pins the §8 codes of bad requests.
func TestSeed002_8_3_ImageRequestErrors(t *testing.T) {
	good := params(encodePNG(t, 4, 4))
	cases := []struct {
		name  string
		query string
		p     json.RawMessage
		code  string
	}{
		{"bad base64", "width is 4", json.RawMessage(`{"image":"!!!not base64!!!"}`), "QWED-REQ-001"},
		{"missing image", "width is 4", json.RawMessage(`{}`), "QWED-REQ-002"},
		{"no params", "width is 4", nil, "QWED-REQ-002"},
		{"image not a string", "width is 4", json.RawMessage(`{"image":42}`), "QWED-REQ-001"},
		{"unknown field", "width is 4", json.RawMessage(`{"image":"iVBO","colour":"red"}`), "QWED-REQ-001"},
		{"truncated png header", "width is 4", params([]byte("\x89PNG\r\n\x1a\nxx")), "QWED-REQ-001"},
		{"empty query", "", good, "QWED-REQ-002"},
		{"empty claim", " , and ; ", good, "QWED-REQ-003"},
		{"bad data url", "width is 4", json.RawMessage(`{"image":"data:image/png,abc"}`), "QWED-REQ-001"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := verify(tc.query, tc.p)
			if out.Status != engines.Error || out.Err == nil || out.Err.Code != tc.code {
				t.Fatalf("got %s %+v, want ERROR %s", out.Status, out.Err, tc.code)
			}
		})
	}
	// Bytes that are no recognised format are UNSUPPORTED, not guessed.
	if out := verify("width is 4", params([]byte("BM this is a bitmap"))); out.Status != engines.Unsupported {
		t.Fatalf("unknown format: %s", out.Status)
	}
}

// TestImageBase64Variants: data URLs, whitespace, URL alphabet, no padding.
func TestImageBase64Variants(t *testing.T) {
	data := encodePNG(t, 7, 5)
	std := base64.StdEncoding.EncodeToString(data)
	variants := map[string]string{
		"std":      std,
		"data url": "data:image/png;base64," + std,
		"wrapped":  std[:10] + "\n" + std[10:20] + "\r\n " + std[20:],
		"url":      base64.URLEncoding.EncodeToString(data),
		"raw std":  base64.RawStdEncoding.EncodeToString(data),
		"raw url":  base64.RawURLEncoding.EncodeToString(data),
	}
	names := make([]string, 0, len(variants))
	for k := range variants {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		p, _ := json.Marshal(Params{Image: variants[name]})
		if out := verify("7x5 png", p); out.Status != engines.Verified {
			t.Errorf("%s: %s %+v", name, out.Status, out.Err)
		}
	}
}

// TestImageLimits pins MaxPixels and MaxImageBytes on both sides, and the
// claim limits.
func TestImageLimits(t *testing.T) {
	// MaxPixels: 10000 x 10000 is exactly the limit; one more row is over.
	at := verify("width is 10000", params(pngHeader(10000, 10000)))
	if at.Status != engines.Verified {
		t.Fatalf("at MaxPixels: %s %+v", at.Status, at.Err)
	}
	over := verify("width is 10000", params(pngHeader(10000, 10001)))
	if over.Status != engines.Error || over.Err.Code != "QWED-REQ-004" {
		t.Fatalf("over MaxPixels: %s %+v", over.Status, over.Err)
	}
	// MaxImageBytes: a file of exactly the limit passes, one byte more is refused.
	big := append(pngHeader(4, 4), make([]byte, MaxImageBytes-len(pngHeader(4, 4)))...)
	if h, err := ReadHeader(big); err != nil || h.SizeBytes != MaxImageBytes {
		t.Fatalf("at MaxImageBytes: %v %+v", err, h)
	}
	if out := verify("size is at most 20 MiB", params(big)); out.Status != engines.Verified {
		t.Fatalf("at MaxImageBytes via base64: %s %+v", out.Status, out.Err)
	}
	if out := verify("width is 4", params(append(big, 0))); out.Status != engines.Error || out.Err.Code != "QWED-REQ-004" {
		t.Fatalf("over MaxImageBytes: %s %+v", out.Status, out.Err)
	}
	good := params(encodePNG(t, 4, 4))
	clauses := strings.Repeat("width is 4 and ", MaxClauses-1) + "width is 4"
	if out := verify(clauses, good); out.Status != engines.Verified {
		t.Fatalf("at MaxClauses: %s %+v", out.Status, out.Err)
	}
	if out := verify(clauses+" and height is 4", good); out.Status != engines.Error || out.Err.Code != "QWED-REQ-004" {
		t.Fatalf("over MaxClauses: %s %+v", out.Status, out.Err)
	}
	tokens := "width is 4 " + strings.Repeat("image ", MaxClaimTokens-3)
	if out := verify(tokens, good); out.Status != engines.Verified {
		t.Fatalf("at MaxClaimTokens: %s %+v", out.Status, out.Err)
	}
	if out := verify(tokens+"image", good); out.Status != engines.Error || out.Err.Code != "QWED-REQ-004" {
		t.Fatalf("over MaxClaimTokens: %s %+v", out.Status, out.Err)
	}
	if out := verify(strings.Repeat("a", engines.MaxQueryBytes+1), good); out.Status != engines.Error || out.Err.Code != "QWED-REQ-004" {
		t.Fatalf("over MaxQueryBytes: %s %+v", out.Status, out.Err)
	}
}

// TestImageDeterminism: the same request gives byte-identical outcomes.
func TestImageDeterminism(t *testing.T) {
	p := params(encodePNG(t, 640, 480))
	for _, q := range []string{"the image is a PNG of 640x480", "width is 10 and it is red", "format is gif"} {
		a, _ := json.Marshal(verify(q, p))
		b, _ := json.Marshal(verify(q, p))
		if !bytes.Equal(a, b) {
			t.Fatalf("%q: %s != %s", q, a, b)
		}
	}
}

// TestImageCapabilities: the §4.2 document names the engine and its limits.
func TestImageCapabilities(t *testing.T) {
	c := New().Capabilities()
	if c.EngineID != "image" || c.Limits["max_pixels"] != MaxPixels || !json.Valid(c.Params) {
		t.Fatalf("%+v", c)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseClaim: the claim parser never panics and always yields a
// decision or an error with a code.
func FuzzParseClaim(f *testing.F) {
	for _, s := range []string{"the image is a PNG of 640x480", "size < 2 MB", "aspect ratio is 4:3", "width ≥ 3 and not portrait", "1/0", "9999999999999999999x1"} {
		f.Add(s)
	}
	p := params(encodePNG(f, 3, 2))
	f.Fuzz(func(t *testing.T, q string) {
		out := verify(q, p)
		if out.Status == engines.Error && out.Err == nil {
			t.Fatalf("error without a problem for %q", q)
		}
	})
}

// FuzzReadHeader: header reading never panics on arbitrary bytes.
func FuzzReadHeader(f *testing.F) {
	f.Add(encodePNG(f, 3, 2))
	f.Add(webpVP8X(3, 2))
	f.Add(webpVP8(3, 2))
	f.Add(encodeGIF(f, 3, 2))
	f.Add(encodeJPEG(f, 3, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadHeader(data)
		if err == nil && (h.Width <= 0 || h.Height <= 0 || int64(h.Width)*int64(h.Height) > MaxPixels) {
			t.Fatalf("accepted %+v", h)
		}
	})
}

func benchVerify(b *testing.B, q string, p json.RawMessage) {
	e := New()
	req := engines.Request{Query: q, Type: "image", Params: p}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		e.Verify(context.Background(), req)
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(durs)
	if len(durs) > 0 {
		b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
	}
}

func BenchmarkVerify_PNGDims(b *testing.B) {
	benchVerify(b, "the image is a PNG of 640x480", params(encodePNG(b, 640, 480)))
}

func BenchmarkVerify_JPEGSize(b *testing.B) {
	benchVerify(b, "format is jpeg and size is under 2 MB", params(encodeJPEG(b, 640, 480)))
}
