package testenv

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryToolIsPinnedToAReleaseAndCachedUnderItsKey(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(ToolsCacheEnv, cache)
	want := map[string]string{"etcd": "v3.7.3", "kube-apiserver": "v1.37.2"}
	for _, tl := range tools {
		assert.Equal(t, want[tl.name], tl.version(), "%s's pinned version", tl.name)
		assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{12}$`), tl.key())
		path, err := tl.cachedPath()
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(cache, tl.name+"-"+tl.version()+"-"+tl.key()), path)
	}
}

func TestKubeAPIServerIsStampedWithItsRelease(t *testing.T) {
	flags := kubeVersionFlags("v1.37.2")
	assert.Contains(t, flags, "version.gitVersion=v1.37.2")
	assert.Contains(t, flags, "version.gitMinor=37")
}

func TestAnUnknownToolIsAnError(t *testing.T) {
	_, err := binary("kubelet")
	assert.ErrorContains(t, err, `no control-plane binary named "kubelet"`)
}
