// Package cli holds what every example program needs and none of them is
// about: a flag set whose -h answers with a synopsis, kubectl's connection
// flags (package kubeconfig) plus --namespace, and a namespace to work in.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/kubeconfig"
)

// NewFlagSet returns an example's flag set. Its -h prints "name:
// synopsis", then the flags, to out; Parse then returns flag.ErrHelp,
// which Main turns into exit status 0.
func NewFlagSet(name, synopsis string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "%s: %s\n\nusage: go run ./%s [flags]   (in examples/)\n", name, synopsis, name)
		fs.PrintDefaults()
	}
	return fs
}

// Flags are the connection flags every example takes: kubectl's
// --kubeconfig and --context (Load finds the cluster as kubectl would) and
// --namespace.
type Flags struct {
	kubeconfig.Flags
	// Namespace is the --namespace flag: where the example creates and
	// watches its objects. It is created if missing.
	Namespace string
}

// Register adds --kubeconfig, --context and --namespace to fs.
// defaultNamespace is the namespace used when the flag is not given.
func Register(fs *flag.FlagSet, defaultNamespace string) *Flags {
	f := &Flags{}
	f.Flags.Register(fs)
	fs.StringVar(&f.Namespace, "namespace", defaultNamespace, "namespace to work in; created if missing")
	return f
}

// CoreV1 returns a REST client for the core/v1 API group built from cfg:
// what a clientset builds underneath, without the clientset.
func CoreV1(cfg *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(cfg)
}

// EnsureNamespace creates namespace ns unless it exists.
func EnsureNamespace(ctx context.Context, client *rest.RESTClient, ns string) error {
	err := client.Post().Resource("namespaces").
		Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).Do(ctx).Error()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}
