package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func TestRawWatchShowsListWatchReconnectAndGone(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var out bytes.Buffer
	err := run(ctx, []string{
		"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns,
		"--duration", "5s", "--watch-timeout", "2s", "--changes", "4",
	}, &out)
	require.NoError(t, err, out.String())
	got := out.String()
	t.Log(got)

	assert.Contains(t, got, "LIST   0 configmaps in "+ns)
	assert.Contains(t, got, "WATCH  #1 from resourceVersion")
	assert.Contains(t, got, "WATCH  #2 from resourceVersion", "the server's timeout must end a watch and the example must reconnect")
	assert.Regexp(t, `ADDED\s+raw-watch-demo`, got)
	assert.Regexp(t, `MODIFIED\s+raw-watch-demo`, got)
	assert.Regexp(t, `DELETED\s+raw-watch-demo`, got)
	assert.Regexp(t, `(410    Gone|OK     this server still had that history)`, got)
}

// With the watch cache off and etcd compacted, the server has forgotten the
// old history, and the example's last step sees the real 410 Gone.
func TestRawWatchSeesGoneAfterCompaction(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := cp.Compact(ctx)
	require.NoError(t, err)

	var out bytes.Buffer
	err = run(ctx, []string{
		"--kubeconfig", cp.KubeconfigPath(), "--namespace", "gone",
		"--duration", "1s", "--watch-timeout", "1s", "--changes", "0",
	}, &out)
	require.NoError(t, err, out.String())
	t.Log(out.String())
	assert.Contains(t, out.String(), "410    Gone")
}
