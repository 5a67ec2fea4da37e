package testlog_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/listwatch/informer/internal/testlog"
)

func ExampleBuffer() {
	var logs testlog.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() { logger.Info("worker done", "worker", i) })
	}
	wg.Wait()
	fmt.Println(strings.Count(logs.String(), "worker done"))
	// Output: 3
}
