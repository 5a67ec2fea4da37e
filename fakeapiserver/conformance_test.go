package fakeapiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// The differential conformance test runs each script against the fake
// and against a real kube-apiserver (testenv) and requires the same
// outcomes: status codes, reasons, kinds, event types and their order,
// bookmarks and their annotations. What legitimately differs (the values
// of resourceVersions and uids, timestamps) is never recorded; where a
// script cares about a resourceVersion it records a relation ("newer",
// "same").
//
// The shared control plane runs with the watch cache on, as real
// clusters do; the scripts about compaction need it off (with the cache
// on, compaction gives no 410) and run on a private one.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

// target is one server a script runs against.
type target struct {
	name      string
	http      *http.Client
	host      string
	cfg       *rest.Config
	namespace string
	// compact forgets the history before the latest write.
	compact func(ctx context.Context)
	// crd installs, deletes and moves custom resources.
	installCRD func(ctx context.Context, c fakeapiserver.CRD)
	deleteCRD  func(ctx context.Context, c fakeapiserver.CRD)
	moveCRD    func(ctx context.Context, c fakeapiserver.CRD, to string)
}

// script is one scripted request sequence; it records outcomes with rec.
type script func(ctx context.Context, t *testing.T, tg *target, rec *recorder)

type recorder struct{ lines []string }

func (r *recorder) add(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

// conform runs s against the real server and the fake, and requires the
// same outcomes.
func conform(t *testing.T, cp *testenv.ControlPlane, s script) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var real, fake recorder
	s(ctx, t, realTarget(t, cp), &real)
	// The fake, in a bubble: its watch timeouts and bookmarks pass on
	// simulated time, so a script's waits cost real time once, not twice.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // as the real side's: a script's waits end
		defer cancel()
		s(ctx, t, fakeTarget(t), &fake)
	})
	require.Equal(t, real.lines, fake.lines, "fake (right) differs from kube-apiserver (left)")
	t.Logf("%d outcomes agree:\n  %s", len(real.lines), strings.Join(real.lines, "\n  "))
}

func realTarget(t *testing.T, cp *testenv.ControlPlane) *target {
	cfg := cp.Config()
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	tg := &target{name: "kube-apiserver", http: hc, host: cfg.Host, cfg: cfg, namespace: cp.Namespace(t)}
	tg.compact = func(ctx context.Context) {
		_, err := cp.Compact(ctx)
		require.NoError(t, err)
	}
	crd := func(c fakeapiserver.CRD) testenv.CRD {
		return testenv.CRD{Group: c.Group, Version: c.Version, Kind: c.Kind, Plural: c.Plural, ClusterScoped: c.ClusterScoped}
	}
	tg.installCRD = func(ctx context.Context, c fakeapiserver.CRD) { require.NoError(t, cp.InstallCRD(ctx, crd(c))) }
	tg.deleteCRD = func(ctx context.Context, c fakeapiserver.CRD) {
		require.NoError(t, cp.DeleteCRD(ctx, crd(c)))
		// Discovery drops the group a moment after the CRD is gone (its
		// controllers work from the delete's event, apart from the
		// storage torn down): wait until both endpoints say so.
		waitFor(ctx, t, func() bool {
			code, _ := tg.do(ctx, t, "GET", fmt.Sprintf("/apis/%s/%s", c.Group, c.Version), "", nil)
			return code == 404 && apisVersions(ctx, t, tg, c.Group) == nil
		})
	}
	tg.moveCRD = func(ctx context.Context, c fakeapiserver.CRD, to string) { moveRealCRD(ctx, t, tg, c, to) }
	return tg
}

func fakeTarget(t *testing.T) *target {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	t.Cleanup(mem.Close)
	cfg := mem.Config()
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	tg := &target{name: "fake", http: hc, host: cfg.Host, cfg: cfg, namespace: "conformance"}
	code, _ := tg.do(t.Context(), t, "POST", "/api/v1/namespaces", "", map[string]any{"metadata": map[string]any{"name": tg.namespace}})
	require.Equal(t, 201, code)
	tg.compact = func(context.Context) { srv.Compact(srv.ResourceVersion()) }
	tg.installCRD = func(_ context.Context, c fakeapiserver.CRD) { require.NoError(t, srv.InstallCRD(c)) }
	tg.deleteCRD = func(_ context.Context, c fakeapiserver.CRD) {
		_, err := srv.RemoveCRD(schema.GroupResource{Group: c.Group, Resource: c.Plural})
		require.NoError(t, err)
	}
	tg.moveCRD = func(_ context.Context, c fakeapiserver.CRD, to string) {
		require.NoError(t, srv.MoveCRD(schema.GroupResource{Group: c.Group, Resource: c.Plural}, to))
	}
	return tg
}

// moveRealCRD serves the CRD at version to instead: a new served and
// storage version, the old one no longer served.
func moveRealCRD(ctx context.Context, t *testing.T, tg *target, c fakeapiserver.CRD, to string) {
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + c.Plural + "." + c.Group
	code, crd := tg.do(ctx, t, "GET", path, "", nil)
	require.Equal(t, 200, code)
	spec := crd["spec"].(map[string]any)
	versions := spec["versions"].([]any)
	for _, v := range versions {
		v := v.(map[string]any)
		v["served"], v["storage"] = false, false
	}
	spec["versions"] = append(versions, map[string]any{"name": to, "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
	code, body := tg.do(ctx, t, "PUT", path, "", crd)
	require.Equal(t, 200, code, "%v", body)
	// The apiserver serves the new version a moment later, and its list
	// of groups (built from APIService objects that controllers write
	// after the CRD changed) names it alone later still.
	waitFor(ctx, t, func() bool {
		code, _ := tg.do(ctx, t, "GET", fmt.Sprintf("/apis/%s/%s/%s", c.Group, to, c.Plural), "", nil)
		old, _ := tg.do(ctx, t, "GET", fmt.Sprintf("/apis/%s/%s", c.Group, c.Version), "", nil)
		return code == 200 && old == 404 && slices.Equal(apisVersions(ctx, t, tg, c.Group), []string{to})
	})
	// The new version's watch cache fills after its first request, and a
	// WATCH meanwhile is answered 429: the script's watch must not be it.
	waitFor(ctx, t, func() bool {
		code, s := tg.watch(ctx, t, fmt.Sprintf("/apis/%s/%s/%s?watch=true&timeoutSeconds=1", c.Group, to, c.Plural))
		if s != nil {
			s.cancel()
		}
		return code == 200
	})
}

// apisVersions is the versions /apis lists for group, nil if it does
// not list the group.
func apisVersions(ctx context.Context, t *testing.T, tg *target, group string) []string {
	_, obj := tg.do(ctx, t, "GET", "/apis", "", nil)
	list, _ := obj["groups"].([]any)
	for _, g := range list {
		g := g.(map[string]any)
		if g["name"] != group {
			continue
		}
		vs := []string{}
		for _, v := range g["versions"].([]any) {
			vs = append(vs, fmt.Sprint(v.(map[string]any)["version"]))
		}
		return vs
	}
	return nil
}

// waitFor polls cond until it holds, for what a real server does a
// moment after it answers (discovery after a CRD changes). The bound
// only turns a hang into a failure.
func waitFor(ctx context.Context, t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition never held")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// do sends one request with a JSON body (if any) and returns the status
// code and the JSON answer.
func (tg *target) do(ctx context.Context, t *testing.T, method, path, accept string, body any) (int, map[string]any) {
	t.Helper()
	code, _, raw := tg.doRaw(ctx, t, method, path, accept, body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return code, out
}

func (tg *target) doRaw(ctx context.Context, t *testing.T, method, path, accept string, body any) (int, string, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, tg.host+path, r)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	resp, err := tg.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

// outcome describes an answer without what legitimately differs: the
// status code, and the kind, or for a Status its reason.
func outcome(code int, obj map[string]any) string {
	if obj["kind"] == "Status" {
		return fmt.Sprintf("%d %v", code, obj["reason"])
	}
	return fmt.Sprintf("%d %v", code, obj["kind"])
}

// stream is an open JSON watch.
type stream struct {
	events chan map[string]any // closed when the server ends the watch
	cancel context.CancelFunc
}

// watch opens a JSON watch on path (with its query).
func (tg *target) watch(ctx context.Context, t *testing.T, path string) (int, *stream) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, "GET", tg.host+path, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	resp, err := tg.http.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != 200 {
		resp.Body.Close()
		cancel()
		return resp.StatusCode, nil
	}
	s := &stream{events: make(chan map[string]any, 100), cancel: cancel}
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		dec := json.NewDecoder(bufio.NewReader(resp.Body))
		for {
			var ev map[string]any
			if err := dec.Decode(&ev); err != nil {
				return
			}
			s.events <- ev
		}
	}()
	return 200, s
}

// next returns the next event's description, or "end" when the server
// ended the watch. The bound only turns a hang into a failure.
func (s *stream) next(t *testing.T) string {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			return "end"
		}
		return describeEvent(ev)
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event within 30s")
		return ""
	}
}

// describeEvent: type, and the object's name, or for an ERROR its code
// and reason, or for a BOOKMARK its initial-events-end annotation.
func describeEvent(ev map[string]any) string {
	obj, _ := ev["object"].(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	switch ev["type"] {
	case "ERROR":
		return fmt.Sprintf("ERROR %v %v", obj["code"], obj["reason"])
	case "BOOKMARK":
		ann, _ := meta["annotations"].(map[string]any)
		if ann["k8s.io/initial-events-end"] == "true" {
			return "BOOKMARK initial-events-end"
		}
		return "BOOKMARK"
	}
	return fmt.Sprintf("%v %v", ev["type"], meta["name"])
}

// statusOf turns an API error into a short outcome: code and reason.
func statusOf(err error) string {
	if err == nil {
		return "ok"
	}
	if s, ok := err.(apierrors.APIStatus); ok {
		return fmt.Sprintf("%d %s", s.Status().Code, s.Status().Reason)
	}
	return "error " + err.Error()
}
