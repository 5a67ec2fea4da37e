package reflector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// cborScanner walks the CBOR (RFC 8949) of a LIST answer without decoding
// it, as jsonScanner walks JSON: it finds where each data item begins and
// ends and copies its bytes, so that a list's items can be cut apart as
// they arrive and decoded elsewhere (by apimachinery's CBOR decoder, in
// direct). It reads only the heads that say how long an item is; the
// decoder that gets the bytes checks the rest.
//
// A data item is a head, one byte whose top three bits are its major type
// and whose low five bits are its argument or say how many bytes of
// argument follow (1, 2, 4 or 8; 31 is "indefinite length"), then its
// content: nothing (integers, simple values, floats, whose bits are the
// argument), argument bytes (byte and text strings), argument items
// (arrays), twice argument items (maps, key then value), or one item (a
// tag). Indefinite strings, arrays and maps end with the break byte 0xff.
type cborScanner struct {
	r *bufio.Reader
}

// The major types.
const (
	cborUint   = 0
	cborNegInt = 1
	cborBytes  = 2
	cborText   = 3
	cborArray  = 4
	cborMap    = 5
	cborTag    = 6
	cborSimple = 7 // simple values (false, true, null) and floats
)

// cborBreak ends an indefinite-length item; cborNull is the simple value
// null.
const (
	cborBreak = 0xff
	cborNull  = 0xf6
)

// maxCBORDepth is how deeply items may nest: as deep as apimachinery's
// CBOR decoder (MaxNestedLevels) and JSON's decoder allow, so that any
// object the API server stores, and a JSON LIST or a CBOR watch reads, a
// CBOR LIST reads too
// (TestACBORListOfADeeplyNestedCustomResourceIsReadAsItsJSONListIs); and
// a bound on the recursion of appendItem. The decoder that gets an
// item's bytes enforces its own limit.
const maxCBORDepth = 10000

// cborHead is one item's head: its major type, and its argument (the
// value, the length, or the count), unless indefinite.
type cborHead struct {
	major      byte
	arg        uint64
	indefinite bool
}

// appendHead reads one head and appends its bytes to buf.
func (s *cborScanner) appendHead(buf []byte) ([]byte, cborHead, error) {
	first, err := s.r.ReadByte()
	if err != nil {
		return buf, cborHead{}, unexpectedEOF(err)
	}
	buf = append(buf, first)
	h := cborHead{major: first >> 5}
	info := first & 0x1f
	switch {
	case info < 24:
		h.arg = uint64(info)
		return buf, h, nil
	case info == 31:
		if h.major == cborUint || h.major == cborNegInt || h.major == cborTag {
			return buf, h, fmt.Errorf("CBOR head 0x%02x is not well-formed", first)
		}
		h.indefinite = true // or, for major type 7, a break
		return buf, h, nil
	case info > 27:
		return buf, h, fmt.Errorf("CBOR head 0x%02x is not well-formed", first)
	}
	n := 1 << (info - 24) // 1, 2, 4 or 8 bytes of argument
	arg, err := s.r.Peek(n)
	if err != nil {
		return buf, h, unexpectedEOF(err)
	}
	var wide [8]byte
	copy(wide[8-n:], arg)
	h.arg = binary.BigEndian.Uint64(wide[:])
	buf = append(buf, arg...)
	_, _ = s.r.Discard(n)
	return buf, h, nil
}

// appendItem reads one whole data item and appends its bytes to buf.
func (s *cborScanner) appendItem(buf []byte, depth int) ([]byte, error) {
	if depth > maxCBORDepth {
		return buf, fmt.Errorf("CBOR items nested more than %d deep", maxCBORDepth)
	}
	buf, h, err := s.appendHead(buf)
	if err != nil {
		return buf, err
	}
	switch h.major {
	case cborUint, cborNegInt:
		return buf, nil
	case cborSimple:
		if h.indefinite {
			return buf, errors.New("a CBOR break outside an indefinite-length item")
		}
		return buf, nil
	case cborTag:
		return s.appendItem(buf, depth+1)
	case cborBytes, cborText:
		if h.indefinite {
			return s.appendUntilBreak(buf, depth)
		}
		return s.appendBytes(buf, h.arg)
	}
	// An array or a map: its count of items, or items up to a break.
	if h.indefinite {
		return s.appendUntilBreak(buf, depth)
	}
	count := h.arg
	if h.major == cborMap {
		if count > 1<<62 {
			return buf, fmt.Errorf("a CBOR map of %d entries", count)
		}
		count *= 2
	}
	for range count {
		if buf, err = s.appendItem(buf, depth+1); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// appendUntilBreak appends the items of an indefinite-length item, and
// the break that ends them.
func (s *cborScanner) appendUntilBreak(buf []byte, depth int) ([]byte, error) {
	for {
		next, err := s.r.Peek(1)
		if err != nil {
			return buf, unexpectedEOF(err)
		}
		if next[0] == cborBreak {
			_, _ = s.r.Discard(1)
			return append(buf, cborBreak), nil
		}
		if buf, err = s.appendItem(buf, depth+1); err != nil {
			return buf, err
		}
	}
}

// appendBytes appends a string's n bytes, growing buf as they come, not
// by what the head claims: a head may claim more than will ever arrive.
func (s *cborScanner) appendBytes(buf []byte, n uint64) ([]byte, error) {
	for n > 0 {
		chunk := min(n, 64<<10)
		start := len(buf)
		buf = append(buf, make([]byte, chunk)...)
		if _, err := io.ReadFull(s.r, buf[start:]); err != nil {
			return buf, unexpectedEOF(err)
		}
		n -= chunk
	}
	return buf, nil
}

// skipSelfDescribed consumes tag 55799 ("self-described CBOR") if it comes next:
// kube-apiserver starts every CBOR body with it.
func (s *cborScanner) skipSelfDescribed() {
	if start, err := s.r.Peek(len(selfDescribedCBOR)); err == nil && string(start) == string(selfDescribedCBOR) {
		_, _ = s.r.Discard(len(selfDescribedCBOR))
	}
}

// decodeValue reads one item and decodes it into v as apimachinery's
// CBOR serializer would.
func (s *cborScanner) decodeValue(v any) error {
	data, err := s.appendItem(nil, 0)
	if err != nil {
		return err
	}
	return direct.Unmarshal(data, v)
}

// skipValue reads one item and forgets it.
func (s *cborScanner) skipValue() error {
	_, err := s.appendItem(nil, 0)
	return err
}

// eachEntry reads a map, calling fn with each key, which must be a text
// string; fn must consume the key's value.
func (s *cborScanner) eachEntry(fn func(key string) error) error {
	_, h, err := s.appendHead(nil)
	if err != nil {
		return err
	}
	if h.major != cborMap {
		return fmt.Errorf("found CBOR major type %d where a map belongs", h.major)
	}
	for i := uint64(0); h.indefinite || i < h.arg; i++ {
		if h.indefinite {
			next, err := s.r.Peek(1)
			if err != nil {
				return unexpectedEOF(err)
			}
			if next[0] == cborBreak {
				_, _ = s.r.Discard(1)
				return nil
			}
		}
		var key string
		if err := s.decodeValue(&key); err != nil {
			return fmt.Errorf("a map key: %w", err)
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	return nil
}

// end checks that nothing follows.
func (s *cborScanner) end() error {
	if _, err := s.r.Peek(1); err != io.EOF {
		if err != nil {
			return err
		}
		return errors.New("more bytes after the end of the list")
	}
	return nil
}

// selfDescribedCBOR is tag 55799's head, which kube-apiserver writes
// before every CBOR body, and apimachinery's CBOR decoder recognizes
// CBOR by.
var selfDescribedCBOR = []byte{0xd9, 0xd9, 0xf7}
