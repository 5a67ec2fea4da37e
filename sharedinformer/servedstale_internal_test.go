package sharedinformer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
)

// countingMapper is a resettable RESTMapper that counts its resets.
type countingMapper struct {
	*meta.DefaultRESTMapper
	resets int
}

func (m *countingMapper) Reset()                           { m.resets++ }
func (m *countingMapper) ResetWithContext(context.Context) { m.resets++ }

// A served check that finds its resource not served in its version marks
// the factory's RESTMapper stale about its group, and resets nothing
// itself (a reset waits for any discovery fetch the mapper has in
// flight); a lookup in another group leaves it, and the next lookup in
// that group resets it, once, on its own caller's goroutine.
func TestANoMarksTheMapperStaleAndTheNextLookupInItsGroupResetsIt(t *testing.T) {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	defer mem.Close()
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mapper := &countingMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper(nil)}
	mapper.Add(cm, meta.RESTScopeNamespace)
	f, err := NewFactory(rest.CopyConfig(mem.Config()), FactoryOptions{Mapper: mapper})
	require.NoError(t, err)

	answer, err := f.served.For(schema.GroupVersionResource{Group: "gone.listwatch.dev", Version: "v1", Resource: "squids"}, "")(t.Context())
	require.NoError(t, err)
	require.False(t, answer.Served, "the fake server serves no squids")
	assert.Zero(t, mapper.resets, "the check itself resets nothing")

	_, err = f.mapping(t.Context(), cm)
	require.NoError(t, err)
	assert.Zero(t, mapper.resets, "a lookup in another group leaves the mapper as it is")
	squids := schema.GroupVersionResource{Group: "gone.listwatch.dev", Version: "v1", Resource: "squids"}
	_, err = f.scopeNow(t.Context(), squids)
	require.NoError(t, err)
	assert.Equal(t, 1, mapper.resets, "the next lookup in its group resets the stale mapper first")
	_, err = f.scopeNow(t.Context(), squids)
	require.NoError(t, err)
	assert.Equal(t, 1, mapper.resets, "and only once per 'no'")
}
