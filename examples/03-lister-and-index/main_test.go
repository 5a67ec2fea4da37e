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

func TestListerAnswersFromCacheAndLateHandlerGetsReplay(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var out bytes.Buffer
	err := run(ctx, []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns, "--per-tier", "1"}, &out)
	got := out.String()
	t.Log(got)
	require.NoError(t, err)

	b := ns + "-b"
	assert.Contains(t, got, "with 4 objects")
	assert.Contains(t, got, `lister.Namespace("`+ns+`").List(everything)  → [`+ns+`/db-0 `+ns+`/web-0]`)
	assert.Contains(t, got, "lister.List(tier=db), all namespaces     → ["+b+"/db-0 "+ns+"/db-0]")
	assert.Contains(t, got, `lister.Namespace("`+b+`").List(tier=db)     → [`+b+`/db-0]`)
	assert.Contains(t, got, `indexer.ByIndex("tier", "web")           → [`+b+`/web-0 `+ns+`/web-0]`)
	assert.Contains(t, got, `configmaps "nope" not found`)
	for _, key := range []string{ns + "/db-0", ns + "/web-0", b + "/db-0", b + "/web-0"} {
		assert.Contains(t, got, "late handler: OnAdd("+key+", isInInitialList=true)")
	}
	assert.Contains(t, got, "late handler: OnAdd("+ns+"/cache-0, isInInitialList=false)")
	assert.Contains(t, got, "The tier index now has the values [cache db web].")
}
