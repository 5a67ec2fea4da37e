package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/testenv"
)

// These tests run the skeleton as a process of its own, built with go
// build, as it runs in a Pod: started with flags, stopped with SIGTERM.

// raceEnabled is set by race_test.go when the tests run with -race.
var raceEnabled bool

var (
	buildOnce sync.Once
	binDir    string // holds the built skeleton; removed by TestMain
	binPath   string
	buildErr  error
)

// binary builds the skeleton once per test run and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "skeleton-test-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "skeleton")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func removeBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// process is one running skeleton. Its stdout and stderr go to out.
type process struct {
	cmd    *exec.Cmd
	out    *testlog.Buffer
	exited chan struct{} // closed when the process has exited; err is then set
	err    error
}

// start runs the skeleton in namespace ns. At the end of the test a
// process still running is killed.
func start(t *testing.T, cp *testenv.ControlPlane, ns string) *process {
	p := &process{out: &testlog.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(binary(t), "--kubeconfig", cp.KubeconfigPath(), "--namespace", ns)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("the skeleton's output:\n%s", p.out)
		}
	})
	return p
}

// stop sends SIGTERM, as the kubelet does to stop a Pod, and returns how
// long the process took to exit, failing the test if it took more than
// within or exited with an error.
func (p *process) stop(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	sent := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(within):
		t.Fatalf("the skeleton did not exit within %v of SIGTERM", within)
	}
	took := time.Since(sent)
	require.NoError(t, p.err, "exit status after SIGTERM")
	return took
}

// The kubelet stops a Pod with SIGTERM, and SIGKILLs it after the grace
// period (30 s by default). The skeleton must treat SIGTERM as Ctrl-C:
// stop the workers and the informers, say so, and exit 0.
func TestSIGTERMStopsTheSkeletonCleanlyAndPromptly(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	p := start(t, cp, ns)
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "a"}})
	s.eventually("the skeleton is at work", func() bool { return s.secretData("web")["k"] == "a" })

	// It takes about a second here, nearly all of it the race detector's
	// pause at exit (GORACE atexit_sleep_ms, 1 s by default): Run returns
	// once the reconciles in flight have, and the informers' watches close
	// at once. 10 s is a third of the grace period, and ten times that.
	took := p.stop(t, 10*time.Second)
	t.Logf("exited %v after SIGTERM", took.Round(time.Millisecond))
	assert.Equal(t, "skeleton: stopped\n", lastLine(p.out.String()), "the last word is the clean shutdown")
	assert.NotContains(t, p.out.String(), "skeleton: context", "a shutdown is not reported as an error")
}

// A burst of 200 new labelled ConfigMaps, with the client limits the
// factory chooses when the kubeconfig sets none. At client-go's 5 requests
// a second, the 200 creates alone would take (200 − 10) / 5 = 38 s; at
// the factory's 50 a second, burst 100, they need (200 − 100) / 50 = 2 s,
// so the 30 s bound leaves a wide margin for a slow, shared machine.
func TestABurstOf200ConfigMapsIsReconciledWithin30sOnTheDefaultClientLimits(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cfg := cp.Config()
	cfg.QPS = -1 // the test's own client is not the one measured
	client, err := testenv.CoreV1Client(cfg)
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	p := start(t, cp, ns)
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first", Labels: map[string]string{"app": "demo"}}})
	s.eventually("the skeleton is at work", func() bool { return s.secret("first") != nil })

	const n = 200
	began := time.Now()
	var creates sync.WaitGroup
	next := make(chan int, n) // 10 goroutines create them, as fast as the server allows
	errs := make(chan error, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range 10 {
		creates.Go(func() {
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("burst-%03d", i), Labels: map[string]string{"app": "demo"}},
					Data: map[string]string{"i": fmt.Sprint(i)}}
				errs <- client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(context.Background()).Error()
			}
		})
	}
	creates.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return s.countSecrets() == n+1 }, 30*time.Second, 100*time.Millisecond,
		"a Secret for each of the %d ConfigMaps within 30 s", n)
	t.Logf("%d ConfigMaps created and their Secrets made in %v", n, time.Since(began).Round(time.Millisecond))
	// Past the burst, the skeleton's 2 workers share 50 tokens a second.
	// Whether they are held back a tenth of a 10 s window, and so warned
	// of (sharedinformer's rule), depends on how fast this machine runs
	// them: the warning may come or not. When it comes, it must name the
	// limits that held them back and the way out.
	if out := p.out.String(); strings.Contains(out, "client-side throttling") {
		assert.Contains(t, out, `limits="QPS 50, burst 100"`, "the factory's default limits")
		assert.Contains(t, out, "set QPS to -1", "the way out")
	}
	p.stop(t, 10*time.Second)
}

// A ConfigMap deleted and created again under the same name, while the
// controller was not running, is a new object with a new UID. The Secret
// left from the old one is controlled by the old UID, whose ConfigMap is
// gone: the controller deletes it, as the garbage collector would on a
// real cluster (the local control plane has none), and the delete brings
// the key back for a new Secret, controlled by the new ConfigMap. The
// simulator found the case: its writers delete and create parents while
// the skeleton runs (TestTheSkeletonKeepsASecretPerConfigMapUnderSimulatedFaults).
func TestASecretLeftByAnEarlierConfigMapOfTheSameNameIsDeletedAndMadeAnew(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	labels := map[string]string{"app": "demo"}

	first := start(t, cp, ns)
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}, Data: map[string]string{"k": "old"}})
	s.eventually("a Secret for the first ConfigMap", func() bool { return s.secretData("web")["k"] == "old" })
	oldUID := s.configMap("web").UID
	first.stop(t, 10*time.Second)

	require.NoError(t, client.Delete().Namespace(ns).Resource("configmaps").Name("web").Do(t.Context()).Error())
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}, Data: map[string]string{"k": "new"}})
	newUID := s.configMap("web").UID
	require.NotEqual(t, oldUID, newUID)

	second := start(t, cp, ns)
	s.eventually("a new Secret, controlled by the new ConfigMap", func() bool {
		return controllerUID(s.secret("web")) == newUID && s.secretData("web")["k"] == "new"
	})
	assert.NotContains(t, second.out.String(), "giving up", "no key was given up on")
	second.stop(t, 10*time.Second)
}

func controllerUID(secret *corev1.Secret) types.UID {
	if secret == nil {
		return ""
	}
	if ref := metav1.GetControllerOf(secret); ref != nil {
		return ref.UID
	}
	return ""
}

// countSecrets returns how many Secrets labelled app=demo the namespace
// has.
func (s *server) countSecrets() int {
	list := &corev1.SecretList{}
	err := s.client.Get().Namespace(s.ns).Resource("secrets").Param("labelSelector", "app=demo").Do(s.t.Context()).Into(list)
	if err != nil {
		s.t.Logf("listing Secrets: %v", err)
		return -1
	}
	return len(list.Items)
}

// lastLine returns the last line of out, with its newline.
func lastLine(out string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}
