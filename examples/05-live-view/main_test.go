package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func TestStreamShowsOneChangeInPipelineOrder(t *testing.T) {
	cp := testenv.Shared(t)
	base := start(t, "--kubeconfig", cp.KubeconfigPath(), "--namespace", cp.Namespace(t), "--work", "50ms")
	events := subscribe(t, base)
	post(t, base+"api/create", url.Values{"name": {"sse-demo"}})

	// Collect "sse-demo"'s events until its reconcile is done.
	var got []event
	timeout := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case e := <-events:
			if e.Key == "sse-demo" {
				got = append(got, e)
				done = e.Stage == "workqueue" && e.Kind == "done"
			}
		case <-timeout:
			t.Fatalf("no workqueue done for sse-demo within 30s; got %+v", got)
		}
	}
	first := func(stage, kind string) int {
		for i, e := range got {
			if e.Stage == stage && e.Kind == kind {
				return i
			}
		}
		t.Errorf("no %s %s event for sse-demo in %+v", stage, kind, got)
		return -1
	}
	order := []int{first("reflector", "watch-event"), first("deltafifo", "queued"), first("indexer", "stored"),
		first("listener", "delivered"), first("workqueue", "added"), first("workqueue", "got"), first("workqueue", "done")}
	assert.IsIncreasing(t, order, "reflector → deltafifo → indexer → listener → workqueue")
	assert.NotEmpty(t, got[order[0]].RV, "the watch event carries its resourceVersion")
}

func TestBrowserShowsCreateRelistAndFinalStateUnknownDelete(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("this test drives a real browser and needs %s (%v): apt-get install chromium", chromium, err)
	}
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true})
	// The outage lasts until the test ends it ("end outage"): the informer
	// must not watch again before the compaction, however slow the machine.
	base := start(t, "--kubeconfig", cp.KubeconfigPath(), "--namespace", "live", "--etcd", cp.EtcdURL(),
		"--outage", "10m", "--work", "50ms")
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)

	// The timeout bounds the whole browser, which lives as long as this context.
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelDeadline()
	alloc, cancelAlloc := chromedp.NewExecAllocator(deadline, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.Flag("user-data-dir", t.TempDir()),
		chromedp.Flag("window-size", "1400,1000"),
		chromedp.Env("TMPDIR="+shortTempDir(t)))...) // its singleton socket, which it leaves behind
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	screenshot := func() {
		_ = chromedp.Do(ctx, chromedp.Sleep(time.Second)) // let the chips finish sliding in
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Logf("no screenshot: %v", err)
			return
		}
		path := filepath.Join(t.TempDir(), "live-view.png")
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("screenshot: %s", path)
		if os.Getenv("UPDATE_GOLDEN") == "1" {
			require.NoError(t, os.WriteFile("../../docs/live-view.png", png, 0o644))
		}
	}
	defer screenshot() // also when an assertion fails: the page shows why
	createOnPage := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.SetValue(chromedp.CSS(`#name`), name),
			chromedp.Click(chromedp.CSS(`#create`)),
			chromedp.WaitVisible(chromedp.CSS(`#indexer ul.state li[data-key="`+name+`"]`)),
		)
	}

	// Create: the object reaches the indexer column, and a handler is called.
	// The first action starts the browser, which lives as long as the
	// context of that call: so not one with a step's timeout.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	// do runs steps with a timeout; on failure it logs the page's timeline.
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(stepCtx, steps...); err != nil {
			timeline, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#events`)))
			t.Fatalf("%v; the page's timeline, newest first:\n%s", err, timeline)
		}
	}
	do(
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#conn.live`)),
		createOnPage("demo"),
		chromedp.WaitVisible(chromedp.CSS(`#handler-enqueue ol.recent li[data-key="demo"]`)),
		createOnPage("doomed"),
	)

	// Cut the watch and wait until the page says it is cut (new connections
	// are refused until "end outage"); only then delete "doomed", straight
	// through the API, and write twice more so the informer falls two
	// revisions behind; compact and wait until the page says so; then end
	// the outage: the re-watch gets 410 Gone. Each step waits for the
	// previous one's note, so no step can overtake another.
	do(chromedp.Click(chromedp.CSS(`#cut`)), noted("cut"))
	require.NoError(t, client.Delete().Namespace("live").Resource("configmaps").Name("doomed").Do(ctx).Error())
	for _, step := range []string{"a", "b"} {
		require.NoError(t, client.Patch(types.MergePatchType).Namespace("live").Resource("configmaps").Name("demo").
			Body([]byte(`{"data":{"step":"`+step+`"}}`)).Do(ctx).Error())
	}
	do(
		chromedp.Click(chromedp.CSS(`#compact`)), noted("compact"),
		chromedp.Click(chromedp.CSS(`#reconnect`)),
		chromedp.WaitVisible(chromedp.CSS(`#apiserver ol.recent li.relist`)),
		chromedp.WaitVisible(chromedp.CSS(`#deltafifo ol.recent li.unknown[data-key="doomed"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#handler-audit ol.recent li.unknown[data-key="doomed"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#indexer ul.state li[data-key="doomed"]`)),
	)
}

// noted waits until the page's timeline shows the note of the control
// named kind: the control has done its work by then.
func noted(kind string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(
		`[...document.querySelectorAll('#events tr.control')].some(tr => tr.children[3].textContent === %q)`, kind),
		chromedp.WithPollingTimeout(0))
}

// start runs the example until the test ends and returns the page's URL.
func start(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &testlog.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), out) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done); t.Log(out.String()) })
	serving := regexp.MustCompile(`http://\S+/`)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if u := serving.FindString(out.String()); u != "" {
			return u
		}
		select {
		case err := <-done:
			t.Fatalf("run returned before serving: %v\n%s", err, out.String())
		default:
		}
	}
	t.Fatalf("run printed no URL within a minute:\n%s", out.String())
	return ""
}

// subscribe reads the page's event stream, as the browser's EventSource does.
func subscribe(t *testing.T, base string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"events", nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	events := make(chan event, 10000)
	go func() {
		defer res.Body.Close()
		for lines := bufio.NewScanner(res.Body); lines.Scan(); {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var e event
				if json.Unmarshal([]byte(data), &e) == nil {
					events <- e
				}
			}
		}
	}()
	return events
}

func post(t *testing.T, u string, form url.Values) {
	t.Helper()
	res, err := http.PostForm(u, form)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
}

// shortTempDir is a temporary directory removed at cleanup, with a path
// short enough for a unix socket inside it (t.TempDir's paths, named after
// the test, are too long for chromium's singleton socket).
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "chromium-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
