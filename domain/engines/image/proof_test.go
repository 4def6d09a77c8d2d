package image

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// TestSeed002_5_1_ImageIncludeProof: include_proof binds the answer to
// the image (its SHA-256) and names the header bytes the dimensions come
// from; the PNG's IHDR bytes 16..23 hold exactly the reported size.
func TestSeed002_5_1_ImageIncludeProof(t *testing.T) {
	data := encodePNG(t, 40, 30)
	params, _ := json.Marshal(Params{Image: base64.StdEncoding.EncodeToString(data)})
	req := engines.Request{Query: "width = 40 and height = 31", Type: "image", Params: params, IncludeProof: true}
	out := New().Verify(context.Background(), req)
	p, ok := out.Proof.(Proof)
	if out.Status != engines.Failed || !ok {
		t.Fatalf("status %s proof %#v", out.Status, out.Proof)
	}
	sum := sha256.Sum256(data)
	if p.SHA256 != hex.EncodeToString(sum[:]) || p.Signature != hex.EncodeToString(data[:12]) || p.Header.Width != 40 || p.Header.Height != 30 || p.Source == "" {
		t.Fatalf("proof %+v", p)
	}
	if w, h := binary.BigEndian.Uint32(data[16:20]), binary.BigEndian.Uint32(data[20:24]); w != 40 || h != 30 {
		t.Fatalf("the proof's source says IHDR bytes 16..23 but they hold %dx%d", w, h)
	}
	req.IncludeProof = false
	if out := New().Verify(context.Background(), req); out.Proof != nil {
		t.Fatalf("a proof without include_proof: %#v", out.Proof)
	}
}
