package sharedinformer_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/sharedinformer"
)

// Mistakes are errors when the informer is asked for, not informers that
// retry forever. Neither of these needs the API server: a label selector
// that does not parse, and a type the scheme was never told about.
func ExampleInformerFor_mistakesFailFast() {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	factory, err := sharedinformer.NewFactory(&rest.Config{Host: "https://192.0.2.1"}, sharedinformer.FactoryOptions{Scheme: scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory,
		sharedinformer.InNamespace("shop"), sharedinformer.WithLabels("app in ("))
	fmt.Println(err)

	_, err = sharedinformer.InformerFor[*appsv1.Deployment](ctx, factory, sharedinformer.InNamespace("shop"))
	fmt.Println(err)
	// Output:
	// sharedinformer: informer of *v1.ConfigMap: reflector: label selector "app in (": unable to parse requirement: found '', expected: ',', ')' or identifier
	// sharedinformer: *v1.Deployment is not in FactoryOptions.Scheme: add its group with its package's AddToScheme, or, for a type of your own, scheme.AddKnownTypes(gv, &T{}, &TList{}) and metav1.AddToGroupVersion(scheme, gv) (examples/08-custom-resource)
}
