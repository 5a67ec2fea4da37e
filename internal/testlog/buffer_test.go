package testlog_test

import (
	"sync"
	"testing"

	"github.com/listwatch/informer/internal/testlog"
)

func TestConcurrentWritesAreAllKeptAndStringIsACopy(t *testing.T) {
	var b testlog.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	got := b.String()
	if len(got) != 800 {
		t.Fatalf("kept %d bytes, want 800", len(got))
	}
	_, _ = b.Write([]byte("y"))
	if len(got) != 800 {
		t.Fatalf("an earlier String changed to %d bytes after a write", len(got))
	}
	b.Reset()
	if b.String() != "" {
		t.Fatalf("after Reset: %q", b.String())
	}
}
