package expectations_test

import (
	"fmt"

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

// A create that fails sends no event, so the worker lowers the expectation
// itself; otherwise the key would wait out the whole TTL.
func ExampleExpectations_CreationObserved() {
	exp, err := expectations.New[string](expectations.Options{})
	if err != nil {
		panic(err)
	}
	if err := exp.ExpectCreations("demo/web", 2); err != nil {
		panic(err)
	}
	exp.CreationObserved("demo/web") // the first create's event arrived
	exp.CreationObserved("demo/web") // the second create failed: lower it by hand
	fmt.Println(exp.Satisfied("demo/web"))
	// Output: true
}
