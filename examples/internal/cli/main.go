package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// RunFunc is an example's whole program, with its arguments and output
// passed in so that its test can call it directly.
type RunFunc func(ctx context.Context, args []string, out io.Writer) error

// Main is every example's main: it calls run with a context that Ctrl-C
// (or SIGTERM) cancels, and exits with status 1 and the error if run fails.
// -h (flag.ErrHelp from a NewFlagSet) is an answer, not a failure: status 0.
func Main(run RunFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
}
