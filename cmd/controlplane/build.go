package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/listwatch/informer/testenv"
)

// build builds the binaries into the cache that testenv.Start reads and,
// with -link, links them into a directory (make tools links bin/).
func build(ctx context.Context, args []string, out, errOut io.Writer) error {
	fs := newFlagSet("build", "controlplane build: build etcd and kube-apiserver from pinned modules into the cache (once; then instant)", out)
	link := fs.String("link", "", "also link the binaries into this directory, as etcd and kube-apiserver")
	if err := fs.Parse(args); err != nil {
		return err
	}
	built, err := testenv.Build(ctx, errOut)
	if err != nil {
		return err
	}
	for _, b := range built {
		if *link == "" {
			fmt.Fprintf(out, "%s %s: %s\n", b.Name, b.Version, b.Path)
			continue
		}
		if err := linkInto(*link, b.Name, b.Path); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s -> %s\n", filepath.Join(*link, b.Name), b.Path)
	}
	return nil
}

// linkInto makes dir/name a symbolic link to target, replacing an old one.
func linkInto(dir, name, target string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	link := filepath.Join(dir, name)
	tmp := link + ".new"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}
