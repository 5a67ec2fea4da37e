package leaderelection_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
)

// A Lease's name must be a DNS subdomain and its namespace a DNS label,
// or the API server refuses its create (422) on every attempt: a
// candidate that can never lead, whose Run says so only in one log line
// and in its error once its context ends. New refuses such a Config, as
// it refuses Labels the API server would refuse, and names the field.
func TestNewRejectsALeaseNameOrNamespaceTheAPIServerWouldRefuse(t *testing.T) {
	for _, c := range []struct{ field, namespace, name string }{
		{"Name", "kube-system", "My_Controller"},
		{"Name", "kube-system", "controller/leader"},
		{"Namespace", "Kube_System", "my-controller"},
		{"Namespace", "kube.system", "my-controller"},
	} {
		_, err := leaderelection.New(leaderelection.Config{
			Client:    must(leaderelection.NewClient(&rest.Config{Host: "https://127.0.0.1:1"})),
			Namespace: c.namespace, Name: c.name,
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
			Callbacks: leaderelection.Callbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
		})
		var cerr *leaderelection.ConfigError
		require.ErrorAs(t, err, &cerr, "%s/%s", c.namespace, c.name)
		require.Equal(t, c.field, cerr.Field, "%s/%s", c.namespace, c.name)
	}
}
