package reflector

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	kjson "sigs.k8s.io/json"
)

// jsonScanner walks the JSON of a LIST answer without decoding it: it
// finds where each value begins and ends and copies its bytes, so that a
// list's items can be cut apart as they arrive and decoded elsewhere. It
// checks only what it must to find a value's end (brackets, strings and
// their escapes); the decoder that gets the bytes checks the rest.
type jsonScanner struct {
	r *bufio.Reader
}

// peek returns the next byte that is not white space, without consuming
// it.
func (s *jsonScanner) peek() (byte, error) {
	for {
		b, err := s.r.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\n', '\r':
			_, _ = s.r.Discard(1)
			continue
		}
		return b[0], nil
	}
}

// expect consumes c, which must be the next byte that is not white space.
func (s *jsonScanner) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return unexpectedEOF(err)
	}
	if got != c {
		return fmt.Errorf("found %q where %q belongs", got, c)
	}
	_, _ = s.r.Discard(1)
	return nil
}

// end checks that nothing but white space follows.
func (s *jsonScanner) end() error {
	c, err := s.peek()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("found %q after the end of the list", c)
}

// eachField reads an object, calling fn with each key; fn must consume
// the key's value.
func (s *jsonScanner) eachField(fn func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	for i := 0; ; i++ {
		c, err := s.peek()
		if err != nil {
			return unexpectedEOF(err)
		}
		if c == '}' {
			_, _ = s.r.Discard(1)
			return nil
		}
		if i > 0 {
			if err := s.expect(','); err != nil {
				return err
			}
		}
		var key string
		if err := s.decodeValue(&key); err != nil {
			return fmt.Errorf("a key: %w", err)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
	}
}

// decodeValue reads the next value and decodes it into v, as the API
// machinery decodes JSON: field names are case-sensitive.
func (s *jsonScanner) decodeValue(v any) error {
	raw, err := s.appendValue(nil)
	if err != nil {
		return err
	}
	return kjson.UnmarshalCaseSensitivePreserveInts(raw, v)
}

// skipValue reads the next value, checks that it is JSON, and forgets it.
func (s *jsonScanner) skipValue() error {
	raw, err := s.appendValue(nil)
	if err == nil && !json.Valid(raw) {
		err = fmt.Errorf("a value that is not JSON: %.40q", raw)
	}
	return err
}

// appendValue appends the bytes of the next value, whole, to dst.
func (s *jsonScanner) appendValue(dst []byte) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return dst, unexpectedEOF(err)
	}
	switch c {
	case '{', '[', '"':
		return s.appendNested(dst)
	case '}', ']', ',', ':':
		return dst, fmt.Errorf("found %q where a value belongs", c)
	}
	return s.appendScalar(dst)
}

// appendNested appends an object, an array or a string: up to the bracket
// that closes the first, or the quote that ends the string. Brackets
// inside strings do not count, nor quotes escaped with a backslash.
func (s *jsonScanner) appendNested(dst []byte) ([]byte, error) {
	depth, inString, escaped := 0, false, false
	for {
		chunk, err := s.buffered()
		if err != nil {
			return dst, unexpectedEOF(err)
		}
		i, done := 0, false
		for i < len(chunk) && !done {
			if inString {
				i += skipString(chunk[i:], &inString, &escaped)
			} else {
				switch chunk[i] {
				case '"':
					inString = true
				case '{', '[':
					depth++
				case '}', ']':
					depth--
				}
				i++
			}
			done = depth == 0 && !inString
		}
		dst = append(dst, chunk[:i]...)
		_, _ = s.r.Discard(i)
		if done {
			return dst, nil
		}
	}
}

// skipString skips the inside of a string in b, up to and including its
// closing quote if b holds it, and says how many bytes it skipped; it
// clears *inString at the closing quote, and carries *escaped (a
// backslash was the last byte) from one piece of a string to the next.
func skipString(b []byte, inString, escaped *bool) int {
	for i, c := range b {
		switch {
		case *escaped:
			*escaped = false
		case c == '\\':
			*escaped = true
		case c == '"':
			*inString = false
			return i + 1
		}
	}
	return len(b)
}

// appendScalar appends a number, true, false or null: up to the next
// delimiter.
func (s *jsonScanner) appendScalar(dst []byte) ([]byte, error) {
	for {
		chunk, err := s.buffered()
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
		i := 0
		for i < len(chunk) && !isDelimiter(chunk[i]) {
			i++
		}
		dst = append(dst, chunk[:i]...)
		_, _ = s.r.Discard(i)
		if i < len(chunk) {
			return dst, nil
		}
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// buffered returns the bytes read and not yet consumed, reading more if
// there are none.
func (s *jsonScanner) buffered() ([]byte, error) {
	if s.r.Buffered() == 0 {
		if _, err := s.r.Peek(1); err != nil {
			return nil, err
		}
	}
	return s.r.Peek(s.r.Buffered())
}

// unexpectedEOF turns the end of the answer in the middle of a value into
// io.ErrUnexpectedEOF.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
