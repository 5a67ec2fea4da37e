package expectations_test

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/expectations"
)

// A worker creates one child for owner "demo/web". Until the informer has
// seen that child, a second reconcile of "demo/web" must not trust the
// cache, which does not have the child yet.
func ExampleExpectations() {
	exp, err := expectations.New[string](expectations.Options{})
	if err != nil {
		panic(err)
	}

	// Worker, reconcile #1: the lister shows no child.
	if err := exp.ExpectCreations("demo/web", 1); err != nil {
		panic(err)
	}
	// ...it sends the create; the API server accepts it.

	// Worker, reconcile #2, before the watch event arrives:
	fmt.Println("reconcile #2 may act:", exp.Satisfied("demo/web"))

	// Informer add handler, when the child's event arrives:
	exp.CreationObserved("demo/web")

	// Worker, reconcile #3: the cache now has the child.
	fmt.Println("reconcile #3 may act:", exp.Satisfied("demo/web"))
	// Output:
	// reconcile #2 may act: false
	// reconcile #3 may act: true
}

// A create the server refused sends no event, so the worker lowers the
// expectation itself; otherwise the key would wait out the whole TTL. A
// create that timed out is not lowered: the server may have stored it,
// and its event lowers it when it comes.
func ExampleExpectations_CreationObserved() {
	exp, err := expectations.New[string](expectations.Options{})
	if err != nil {
		panic(err)
	}
	if err := exp.ExpectCreations("demo/web", 3); err != nil {
		panic(err)
	}
	exp.CreationObserved("demo/web") // the first create's event arrived
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "web-2", errors.New("quota exceeded"))
	if expectations.Refused(refused) {
		exp.CreationObserved("demo/web") // the second create was refused: lower it by hand
	}
	timedOut := apierrors.NewTimeoutError("etcd was slow", 0)
	if expectations.Refused(timedOut) {
		exp.CreationObserved("demo/web") // not reached: the third may be stored
	}
	fmt.Println(exp.Satisfied("demo/web"))
	// Output: false
}
