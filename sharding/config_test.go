package sharding

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
)

func leaseClient(t *testing.T) *rest.RESTClient {
	client, err := leaderelection.NewClient(&rest.Config{Host: "https://127.0.0.1:1"})
	require.NoError(t, err)
	return client
}

func TestNewMemberNamesTheFieldItRejects(t *testing.T) {
	good := MemberConfig{Client: leaseClient(t), Namespace: "ns", Ring: "orders", Name: "replica-1", Run: func(context.Context, Shard) {}}
	_, err := NewMember(good)
	require.NoError(t, err)
	for field, change := range map[string]func(*MemberConfig){
		"Ring":             func(c *MemberConfig) { c.Ring = "Orders" },
		"Name":             func(c *MemberConfig) { c.Name = "a-name-far-too-long-to-leave-room-for-the-term-suffix-x" },
		"Run":              func(c *MemberConfig) { c.Run = nil },
		"MaxRejoinBackoff": func(c *MemberConfig) { c.MaxRejoinBackoff = -time.Second },
		"Namespace":        func(c *MemberConfig) { c.Namespace = "" },
		"LeaseDuration": func(c *MemberConfig) {
			c.LeaseDuration, c.RenewDeadline = 2*time.Second, 3*time.Second
		},
	} {
		cfg := good
		change(&cfg)
		_, err := NewMember(cfg)
		requireConfigError(t, field, err)
	}
}

func TestNewSharderNamesTheFieldItRejects(t *testing.T) {
	good := SharderConfig{Config: &rest.Config{Host: "https://127.0.0.1:1"}, LeaseClient: leaseClient(t), LeaseNamespace: "ns", Ring: "orders",
		Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}}
	_, err := NewSharder(good)
	require.NoError(t, err)
	for field, change := range map[string]func(*SharderConfig){
		"Ring":           func(c *SharderConfig) { c.Ring = "" },
		"Config":         func(c *SharderConfig) { c.Config = nil },
		"Resources":      func(c *SharderConfig) { c.Resources = nil },
		"VirtualNodes":   func(c *SharderConfig) { c.VirtualNodes = -1 },
		"Workers":        func(c *SharderConfig) { c.Workers = -1 },
		"Client":         func(c *SharderConfig) { c.LeaseClient = nil },
		"SyncTimeout":    func(c *SharderConfig) { c.SyncTimeout = -time.Second },
		"MaxSyncBackoff": func(c *SharderConfig) { c.MaxSyncBackoff = -time.Second },
	} {
		cfg := good
		change(&cfg)
		_, err := NewSharder(cfg)
		requireConfigError(t, field, err)
	}
}

// A resource listed twice in SharderConfig.Resources, in one version or
// in two (the same objects either way), is refused: its informer would be
// asked for twice, which the factory refuses, so every sync attempt of
// every term failed and nothing was labelled; in two versions, two
// workers would decide the same objects. (Found by our own hunt: the
// same version was accepted, and then, once refused, another version.)
func TestNewSharderRefusesAResourceListedTwiceInAnyVersion(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for name, resources := range map[string][]schema.GroupVersionResource{
		"one version":  {corev1.SchemeGroupVersion.WithResource("configmaps"), corev1.SchemeGroupVersion.WithResource("configmaps")},
		"two versions": {deployments.WithVersion("v1"), deployments.WithVersion("v1beta2")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewSharder(SharderConfig{Config: &rest.Config{Host: "https://127.0.0.1:1"}, LeaseClient: leaseClient(t),
				LeaseNamespace: "ns", Ring: "orders", Resources: resources})
			requireConfigError(t, "Resources", err)
			require.ErrorContains(t, err, "twice")
		})
	}
}

// Against an address where nothing listens, a member and a sharder
// retry until their context ends; then Run returns, and not one of their
// goroutines is left behind.
func TestRunReturnsWhenItsContextEndsAndLeavesNoGoroutineBehind(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const lease, renew, retry = 2 * time.Second, 1500 * time.Millisecond, 200 * time.Millisecond
	quiet := slog.New(slog.DiscardHandler) // every attempt fails, by design
	member, err := NewMember(MemberConfig{Client: leaseClient(t), Namespace: "ns", Ring: "orders", Name: "replica-1",
		LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry, Logger: quiet, Run: func(context.Context, Shard) {}})
	require.NoError(t, err)
	sharder, err := NewSharder(SharderConfig{Config: &rest.Config{Host: "https://127.0.0.1:1"}, LeaseClient: leaseClient(t),
		LeaseNamespace: "ns", Ring: "orders", Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")},
		LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry, Logger: quiet})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	done := make(chan error, 2)
	go func() { done <- member.Run(ctx) }()
	go func() { done <- sharder.Run(ctx) }()
	require.NoError(t, <-done)
	require.NoError(t, <-done)
}

// requireConfigError checks that err names field, as a sharding or a
// leaderelection ConfigError (a Member's and a Sharder's Lease timing is
// checked by the elector they build).
func requireConfigError(t *testing.T, field string, err error) {
	t.Helper()
	var ours *ConfigError
	var theirs *leaderelection.ConfigError
	switch {
	case errors.As(err, &ours):
		require.Equal(t, field, ours.Field)
	case errors.As(err, &theirs):
		require.Equal(t, field, theirs.Field)
	default:
		t.Fatalf("%s: got %v, want a ConfigError", field, err)
	}
}
