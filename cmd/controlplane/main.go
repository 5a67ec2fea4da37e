// Command controlplane builds and runs the local control plane: a real
// etcd and kube-apiserver, built from pinned Go modules and cached, the
// same ones package testenv starts in tests.
//
// From any module that requires github.com/listwatch/informer:
//
//	go run github.com/listwatch/informer/cmd/controlplane build   # once: about 7 minutes on 2 quiet cores, then cached
//	go run github.com/listwatch/informer/cmd/controlplane run     # a cluster until Ctrl-C
//
// In this repository `make tools` runs build (and links bin/etcd and
// bin/kube-apiserver), and `make cluster` runs run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const synopsis = "controlplane: build or run a local etcd + kube-apiserver for tests and examples"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

// errUsage is returned after the usage text was printed for a bad call.
var errUsage = errors.New("usage")

func dispatch(ctx context.Context, args []string, out, errOut io.Writer) error {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "%s\n\nusage:\n  controlplane build [-link DIR]\n  controlplane run [flags]\n\n"+
			"Run `controlplane build -h` or `controlplane run -h` for their flags.\n", synopsis)
	}
	if len(args) == 0 {
		usage(errOut)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(out)
		return flag.ErrHelp
	case "build":
		return build(ctx, args[1:], out, errOut)
	case "run":
		return run(ctx, args[1:], out, errOut)
	default:
		fmt.Fprintf(errOut, "controlplane: unknown command %q\n\n", args[0])
		usage(errOut)
		return errUsage
	}
}

// newFlagSet is a flag set whose -h prints the one-line synopsis, then the
// flags, to out (so that -h is an answer, not an error).
func newFlagSet(name, line string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "%s\n\nusage: controlplane %s [flags]\n", line, name)
		fs.PrintDefaults()
	}
	return fs
}
