// Package image is the image engine of the QWED protocol v1.0 (§4.1, engine id "image"):
// it checks deterministic claims about an image given as base64 in
// params.image — its format, width, height, file size, pixel count, aspect
// ratio and orientation — from the image header alone. It never decodes
// pixels, so any claim about what the image shows (colours, objects, text,
// faces) is UNSUPPORTED with the reason, never guessed.
//
// # Request
//
// params: {"image": "<base64>"} (standard or URL alphabet, padding
// optional, whitespace ignored, an optional "data:image/...;base64," prefix).
// Unknown params fields, a missing image or bad base64 are QWED-REQ-001 /
// QWED-REQ-002 errors; an image over MaxImageBytes or with more than
// MaxPixels pixels (read from the header before anything else) is
// QWED-REQ-004. Recognised formats: png, jpeg, gif (stdlib DecodeConfig)
// and webp (the RIFF header's VP8, VP8L or VP8X chunk); any other bytes are
// UNSUPPORTED.
//
// # Claim grammar (the query)
//
// A claim is one or more clauses joined by "and", "," or ";"; the claim is
// VERIFIED only if every clause holds, FAILED if a decidable clause is
// false, and otherwise UNSUPPORTED. A clause names at most one property and
// states a value, with an optional comparison:
//
//	property  width | wide | height | tall | high | format | type |
//	          size | file size | dimensions | resolution |
//	          aspect ratio | ratio | pixels | pixel count | orientation
//	operator  is, =, ==, equals, is equal to          (equal)
//	          is not, !=, isn't                         (not equal)
//	          <, under, below, less than, smaller than  (less)
//	          >, over, above, more than, greater than, larger than, exceeds
//	          <=, at most, no more than;  >=, at least, no less than
//	values    640 (px | pixels)      width, height, pixel count
//	          640x480, 640 x 480     dimensions
//	          2 MB, 1.5 KiB, 300 bytes  size (KB = 1000, KiB = 1024 bytes)
//	          4:3, 16/9, 1.33        aspect ratio (width / height)
//	          png, jpeg, jpg, gif, webp, bmp, tiff, svg, heic, avif, ...
//	          landscape, portrait, square
//
// Without a property word, a format name, a WxH value, a byte size or an
// orientation word states that property: "the image is a PNG of 640x480"
// is the two clauses format = png and dimensions = 640x480. Filler words
// (the, a, an, image, picture, photo, file, it, its, this, of, at, in,
// with, has, have) are ignored; any other word makes the clause
// UNSUPPORTED, so "a PNG of a cat" is never VERIFIED.
//
// Equality with a decimal value that has a unit or a ratio ("1.5 MB",
// "1.33") holds when the exact value rounds, half away from zero, to the
// claimed value at the claimed number of decimals; every other comparison
// is exact on integers and rationals.
//
// # Result
//
// The Result holds is_valid, the measured format, width, height,
// size_bytes, one check per clause, and for FAILED expected (the image's
// value) and actual (the claimed value) of the first false clause, as in
// QWED protocol v1.0 §6.3.2.
package image
