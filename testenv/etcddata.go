package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// SaveEtcdData writes a copy of etcd's data directory to dst (which must
// not exist yet), for Options.EtcdDataFrom to start another control plane
// on. etcd is stopped for the copy, so the copy is a clean, consistent
// state; kube-apiserver is stopped first and both are started again, on
// the same ports, before it returns. Open watches end, as with Restart.
func (cp *ControlPlane) SaveEtcdData(ctx context.Context, dst string) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return errors.New("saving the etcd data of a stopped control plane")
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("saving etcd data: %s exists already", dst)
	}
	cp.api.proc.stop(apiserverGrace)
	cp.etcd.proc.stop(5 * time.Second)
	copyErr := copyDir(cp.etcd.dataDir(), dst)
	if copyErr != nil {
		os.RemoveAll(dst)
	}
	ctx, cancel := context.WithTimeout(ctx, cp.opts.startTimeout())
	defer cancel()
	if err := cp.etcd.start(ctx); err != nil {
		return errors.Join(copyErr, err)
	}
	return errors.Join(copyErr, cp.api.start(ctx))
}

// copyDir copies the regular files and directories under src to dst,
// keeping their modes.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm())
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		return copyFile(path, target, info.Mode().Perm())
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
