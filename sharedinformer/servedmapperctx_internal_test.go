package sharedinformer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
)

// countingResetOnly counts resets of the Reset the mapper delegate has.
type countingResetOnly struct {
	*meta.DefaultRESTMapper
	resets int
}

func (m *countingResetOnly) Reset() { m.resets++ }

// A review proved it: a caller's Mapper of FactoryOptions.Mapper's own type
// (meta.RESTMapperWithContext) made resettable the way apimachinery
// offers, meta.ToResettableRESTMapperWithContext: it has
// ResetWithContext, which mapping() itself uses on a miss, but not the
// context-free RESTMapper+Reset that NewFactory looked for, so f.forget was
// a no-op, and a 'no' never reset it (freshMapper, checkScope).
func TestAMapperResettableOnlyWithAContextIsResetAfterANo(t *testing.T) {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	defer mem.Close()
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	inner := &countingResetOnly{DefaultRESTMapper: meta.NewDefaultRESTMapper(nil)}
	inner.Add(cm, meta.RESTScopeNamespace)
	mapper := meta.ToResettableRESTMapperWithContext(inner)
	_, plain := mapper.(meta.ResettableRESTMapper)
	require.False(t, plain, "the wrapper has ResetWithContext alone")
	f, err := NewFactory(rest.CopyConfig(mem.Config()), FactoryOptions{Mapper: mapper})
	require.NoError(t, err)

	answer, err := f.served.For(schema.GroupVersionResource{Group: "gone.listwatch.dev", Version: "v1", Resource: "squids"}, "")(t.Context())
	require.NoError(t, err)
	require.False(t, answer.Served)

	_, err = f.scopeNow(t.Context(), schema.GroupVersionResource{Group: "gone.listwatch.dev", Version: "v1", Resource: "squids"})
	require.NoError(t, err)
	assert.Equal(t, 1, inner.resets, "the next lookup in its group after a 'no' resets the stale mapper (it is resettable: mapping() resets it on a miss)")
}
