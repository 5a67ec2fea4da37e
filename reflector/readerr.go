package reflector

import (
	"errors"
	"fmt"
	"io"
)

// A LIST answer can fail two ways while it is decoded: its bytes are not
// the list asked for (ErrUnexpectedObject), or reading them failed (a cut
// connection, the client's Timeout). The second must keep its cause, so
// that errors.Is finds a context.DeadlineExceeded in it, and must not be
// called a bad object. readErrors marks the errors of the body's reads
// so that the decoders can tell the two apart.

// readError is an error the answer's body returned from Read.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// readErrors wraps the body: every error of its Read but io.EOF (which
// the decoders compare with ==) comes back as a *readError.
type readErrors struct{ r io.Reader }

func (r readErrors) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// readFailure returns the reading failure in err, named as such, or nil
// if err is none.
func readFailure(err error) error {
	var re *readError
	if errors.As(err, &re) {
		return fmt.Errorf("reading the LIST answer: %w", re.err)
	}
	return nil
}
