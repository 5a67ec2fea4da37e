package fakeapiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// patch sends a PATCH of the given content type and returns the status
// code and the JSON answer.
func (tg *target) patch(ctx context.Context, t *testing.T, path, contentType string, body any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, tg.host+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := tg.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// mergePatches is what package sharding and the reconcilers send: JSON
// merge patches of labels and annotations, guarded by a resourceVersion
// in the patch.
func mergePatches(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	const merge = "application/merge-patch+json"
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	labelsOf := func(obj map[string]any) any { return obj["metadata"].(map[string]any)["labels"] }
	_, a := tg.do(ctx, t, "POST", col, "", cm("a", map[string]any{"keep": "1", "drop": "1"}, map[string]any{"k": "1"}))

	patch := map[string]any{"metadata": map[string]any{"resourceVersion": meta(a, "resourceVersion"),
		"labels": map[string]any{"drop": nil, "add": "2"}}}
	code, a2 := tg.patch(ctx, t, col+"/a", merge, patch)
	rec.add("merge patch at its rv: %s, %s, labels %v", outcome(code, a2), newer(meta(a, "resourceVersion"), meta(a2, "resourceVersion")), labelsOf(a2))
	code, obj := tg.patch(ctx, t, col+"/a", merge, patch)
	rec.add("merge patch at a stale rv: %s", outcome(code, obj))

	code, a3 := tg.patch(ctx, t, col+"/a", merge, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"by": "x"}}})
	rec.add("merge patch without rv: %s, %s", outcome(code, a3), newer(meta(a2, "resourceVersion"), meta(a3, "resourceVersion")))
	code, a4 := tg.patch(ctx, t, col+"/a", merge, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"by": "x"}}})
	rec.add("merge patch changing nothing: %s, %s", outcome(code, a4), newer(meta(a3, "resourceVersion"), meta(a4, "resourceVersion")))
	code, a5 := tg.patch(ctx, t, col+"/a", merge, map[string]any{"data": map[string]any{"k": nil, "j": "2"}})
	rec.add("merge patch of data: %s, data %v", outcome(code, a5), a5["data"])

	code, obj = tg.patch(ctx, t, col+"/missing", merge, map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "1"}}})
	rec.add("merge patch of a missing object: %s", outcome(code, obj))
	leases := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
	code, obj = tg.patch(ctx, t, leases+"/missing", merge, map[string]any{"spec": map[string]any{"holderIdentity": "x"}})
	rec.add("merge patch of a missing Lease: %s", outcome(code, obj))
	code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"metadata": map[string]any{"uid": "00000000-0000-0000-0000-000000000001"}})
	rec.add("merge patch with another uid: %s", outcome(code, obj))

	w, s := tg.watch(ctx, t, col+"?watch=true&resourceVersion="+meta(a5, "resourceVersion"))
	require.Equal(t, 200, w)
	code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"metadata": map[string]any{"labels": map[string]any{"keep": nil}}})
	rec.add("merge patch removing a label: %s; watch sees %s", outcome(code, obj), s.next(t))
	s.cancel()
}
