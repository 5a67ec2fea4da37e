package leaderelection_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
)

// A leader must stop leading (RenewDeadline) before a standby may take
// over (LeaseDuration), and must be able to try more than once in
// between (RetryPeriod). New checks this and names the field.
func ExampleNew() {
	client, _ := leaderelection.NewClient(&rest.Config{Host: "https://127.0.0.1:6443"})
	_, err := leaderelection.New(leaderelection.Config{
		Client:    client,
		Namespace: "default",
		Name:      "my-controller",
		// A standby waits 15 s for an unrenewed Lease; this leader
		// would keep acting for 20 s: two leaders for 5 s.
		LeaseDuration: 15 * time.Second,
		RenewDeadline: 20 * time.Second,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { /* run the controller until ctx ends */ },
			OnStoppedLeading: func() { /* stop, or exit and let the Pod restart */ },
		},
	})
	fmt.Println(err)
	// Output: leaderelection: Config.LeaseDuration (15s) must be greater than RenewDeadline (20s)
}

// The Role a candidate needs in the Lease's namespace.
func ExampleRules() {
	for _, rule := range leaderelection.Rules("my-controller") {
		fmt.Println(rule.APIGroups, rule.Resources, rule.ResourceNames, rule.Verbs)
	}
	// Output:
	// [coordination.k8s.io] [leases] [my-controller] [get update]
	// [coordination.k8s.io] [leases] [] [create]
}
