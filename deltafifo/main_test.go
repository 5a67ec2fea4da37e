package deltafifo_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Pop waits with the help of context.AfterFunc goroutines; none may
// outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
