package reflector_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// noWatch lists from an in-memory collection and answers every Watch
// with neither a watch nor an error: a broken ListerWatcher.
type noWatch struct {
	*memlistwatch.ListerWatcher[*corev1.ConfigMap]
}

func (noWatch) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) { return nil, nil }

// TestAListerWatcherThatGivesNoWatchAndNoErrorIsAnErrorNotAPanic: bad
// input from a ListerWatcher is reported through OnError and retried,
// never a panic (the reflector used to defer Stop on the nil watch).
// Found by an adversarial hunt.
func TestAListerWatcherThatGivesNoWatchAndNoErrorIsAnErrorNotAPanic(t *testing.T) {
	errs := &errorLog{}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{
		ListerWatcher: noWatch{memlistwatch.New[*corev1.ConfigMap]()}, Store: newRecorder[*corev1.ConfigMap](), OnError: errs.hook})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	eventually(t, func() bool {
		return errs.count(func(err error) bool { return strings.Contains(err.Error(), "neither a watch nor an error") }) >= 2
	}, "the broken watch was not reported, twice")
	cancel()
	require.NoError(t, <-done, "Run returns nil once its context ends")
}
