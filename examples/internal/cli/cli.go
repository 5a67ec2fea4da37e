// Package cli holds what every example program needs and none of them is
// about: the --kubeconfig and --namespace flags, resolved the way kubectl
// resolves them, and a namespace to work in.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Flags are the connection flags every example takes.
type Flags struct {
	// Kubeconfig is the --kubeconfig flag. Empty means kubectl's rules:
	// $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string
	// Namespace is the --namespace flag: where the example creates and
	// watches its objects. It is created if missing.
	Namespace string
}

// Register adds --kubeconfig and --namespace to fs. defaultNamespace is
// the namespace used when the flag is not given.
func Register(fs *flag.FlagSet, defaultNamespace string) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, as kubectl)")
	fs.StringVar(&f.Namespace, "namespace", defaultNamespace, "namespace to work in; created if missing")
	return f
}

// RESTConfig loads the client configuration of the kubeconfig's current
// context, with the precedence kubectl uses.
func (f *Flags) RESTConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules() // $KUBECONFIG, then ~/.kube/config
	rules.ExplicitPath = f.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errors.New("no kubeconfig found: pass --kubeconfig, set $KUBECONFIG, " +
				"create a cluster with `kind create cluster`, or run `make cluster` and use bin/kubeconfig")
		}
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	return cfg, nil
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
