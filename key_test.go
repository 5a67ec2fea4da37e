package informer_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

func TestParseKeyAcceptsNamespacedAndClusterScopedKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want informer.Key
	}{
		{"default/web", informer.Key{Namespace: "default", Name: "web"}},
		{"node-1", informer.Key{Name: "node-1"}},
		{"kube-system/coredns-7c65d6cfc9-abcde", informer.Key{Namespace: "kube-system", Name: "coredns-7c65d6cfc9-abcde"}},
		{"system:controller:job", informer.Key{Name: "system:controller:job"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := informer.ParseKey(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.in, got.String(), "String must give back the text it was parsed from")
		})
	}
}

func TestParseKeyRejectsMalformedKeysWithAReason(t *testing.T) {
	for _, tc := range []struct {
		in, reason string
	}{
		{"", "the key is empty"},
		{"/x", `the namespace before "/" is empty`},
		{"x/", "the name is empty"},
		{"/", `the namespace before "/" is empty`},
		{"a/b/c", `the name contains "/"`},
		{"a//c", `the name contains "/"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := informer.ParseKey(tc.in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, informer.ErrInvalidKey), "error %q must wrap ErrInvalidKey", err)
			assert.Contains(t, err.Error(), tc.reason)
			if tc.in != "" {
				assert.Contains(t, err.Error(), `"`+tc.in+`"`, "the error names the key it rejected")
			}
		})
	}
}

func TestKeyForIsNamespaceAndNameUnchecked(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	assert.Equal(t, informer.Key{Namespace: "default", Name: "web"}, informer.KeyFor(pod))
	assert.Equal(t, informer.Key{}, informer.KeyFor(&corev1.Pod{}), "no check: KeyOf is the checking one")
}

func TestKeyOfUsesNamespaceAndName(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	k, err := informer.KeyOf(pod)
	require.NoError(t, err)
	assert.Equal(t, "default/web", k.String())

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	k, err = informer.KeyOf(node)
	require.NoError(t, err)
	assert.Equal(t, "node-1", k.String())
}

func TestKeyOfRejectsObjectsNoServerWouldReturn(t *testing.T) {
	var typedNil *corev1.ConfigMap
	_, err := informer.KeyOf(typedNil)
	require.ErrorContains(t, err, "the object is nil")
	_, err = informer.KeyOf(nil)
	require.ErrorContains(t, err, "the object is nil")

	for _, meta := range []metav1.ObjectMeta{
		{Namespace: "default"},
		{Namespace: "default", Name: "a/b"},
		{Namespace: "a/b", Name: "web"},
	} {
		_, err := informer.KeyOf(&corev1.ConfigMap{ObjectMeta: meta})
		require.Error(t, err, "%+v", meta)
		assert.ErrorIs(t, err, informer.ErrInvalidKey)
	}
}

// FuzzParseKey checks the contract between ParseKey and String: whatever
// ParseKey accepts, String prints back exactly, and whatever it rejects is
// rejected with ErrInvalidKey, never a panic.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"", "a", "a/b", "/b", "a/", "a/b/c", "//", "ns/name:with:colons"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := informer.ParseKey(s)
		if err != nil {
			if !errors.Is(err, informer.ErrInvalidKey) {
				t.Fatalf("ParseKey(%q) error %v does not wrap ErrInvalidKey", s, err)
			}
			return
		}
		if k.String() != s {
			t.Fatalf("ParseKey(%q) = %+v, which prints as %q", s, k, k.String())
		}
		again, err := informer.ParseKey(k.String())
		if err != nil || again != k {
			t.Fatalf("round trip of %q: got %+v, %v", s, again, err)
		}
	})
}
