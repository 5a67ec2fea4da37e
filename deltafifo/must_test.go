package deltafifo_test

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/deltafifo"
)

// mustFIFO is deltafifo.New for options a test wrote correctly: it panics
// (failing the test) if New returns an error.
func mustFIFO(opts deltafifo.Options[*corev1.ConfigMap]) *deltafifo.DeltaFIFO[*corev1.ConfigMap] {
	f, err := deltafifo.New(opts)
	if err != nil {
		panic(err)
	}
	return f
}
