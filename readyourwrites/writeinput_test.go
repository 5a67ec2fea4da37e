package readyourwrites_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/testenv"
)

// TestWriteRefusesANilRequestOrANilAnswerBeforeSendingAnything: bad input
// to Write is an error naming it, never a panic, and nothing is sent: a
// write whose answer has nowhere to go would be made and then reported
// unreadable, and the caller could not tell whether to send it again.
func TestWriteRefusesANilRequestOrANilAnswerBeforeSendingAnything(t *testing.T) {
	server := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(server)
	t.Cleanup(mem.Close)
	core := must(testenv.CoreV1Client(mem.Config()))
	inf, _ := newCache(t)
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "input"}))
	t.Cleanup(guard.Close)
	cms := readyourwrites.Track(guard, inf)

	err := cms.Write(context.Background(), owner, nil, &corev1.ConfigMap{})
	require.ErrorContains(t, err, "the request is nil")

	var out *corev1.ConfigMap
	req := core.Post().Namespace("demo").Resource("configmaps").Body(configMap("sent"))
	err = cms.Write(context.Background(), owner, req, out)
	require.ErrorContains(t, err, "out is nil")
	require.Empty(t, server.Objects(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}), "nothing may be sent")
}

// Delete takes bad input as Write does: a nil request is an error
// naming it, never a panic, and nothing is recorded.
func TestDeleteRefusesANilRequest(t *testing.T) {
	inf, _ := newCache(t)
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "input-delete"}))
	t.Cleanup(guard.Close)
	cms := readyourwrites.Track(guard, inf)
	var err error
	require.NotPanics(t, func() { err = cms.Delete(context.Background(), owner, owner, nil) }, "a nil request")
	require.ErrorContains(t, err, "the request is nil")
	require.Zero(t, guard.Pending())
}
