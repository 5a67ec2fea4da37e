package leaderelection_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
)

// Each timing rule and required field is checked by New, and the error
// names the field.
func TestNewRejectsAConfigWithAnErrorNamingTheField(t *testing.T) {
	valid := func() leaderelection.Config {
		return leaderelection.Config{
			Client:    must(leaderelection.NewClient(&rest.Config{Host: "https://127.0.0.1:1"})),
			Namespace: "ns", Name: "lease",
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
			Callbacks: leaderelection.Callbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
		}
	}
	_, err := leaderelection.New(valid())
	require.NoError(t, err)

	for field, breakIt := range map[string]func(*leaderelection.Config){
		"Client":                      func(c *leaderelection.Config) { c.Client = nil },
		"Namespace":                   func(c *leaderelection.Config) { c.Namespace = "" },
		"Name":                        func(c *leaderelection.Config) { c.Name = "" },
		"LeaseDuration":               func(c *leaderelection.Config) { c.LeaseDuration = 3 * time.Second },
		"LeaseDuration ":              func(c *leaderelection.Config) { c.LeaseDuration = 4500 * time.Millisecond },
		"RenewDeadline":               func(c *leaderelection.Config) { c.RetryPeriod = 2500 * time.Millisecond },
		"RetryPeriod":                 func(c *leaderelection.Config) { c.RetryPeriod = -time.Second },
		"AttemptTimeout":              func(c *leaderelection.Config) { c.AttemptTimeout = 4 * time.Second },
		"Callbacks.OnStartedLeading":  func(c *leaderelection.Config) { c.Callbacks.OnStartedLeading = nil },
		"Callbacks.OnStoppedLeading":  func(c *leaderelection.Config) { c.Callbacks.OnStoppedLeading = nil },
		"LeaseDuration  (by default)": func(c *leaderelection.Config) { c.LeaseDuration = 0; c.RenewDeadline = 20 * time.Second },
		"Labels":                      func(c *leaderelection.Config) { c.Labels = map[string]string{"ring": "not a value"} },
	} {
		cfg := valid()
		breakIt(&cfg)
		_, err := leaderelection.New(cfg)
		var cerr *leaderelection.ConfigError
		require.ErrorAs(t, err, &cerr, field)
		want, _, _ := strings.Cut(strings.TrimSpace(field), " ")
		require.Equal(t, want, cerr.Field)
		require.Contains(t, err.Error(), "Config."+want+" ")
	}
}

// Without an Identity, each Elector makes one of its own.
func TestTheDefaultIdentityIsTheHostnameAndARandomSuffixUniquePerElector(t *testing.T) {
	cfg := leaderelection.Config{
		Client: must(leaderelection.NewClient(&rest.Config{Host: "https://127.0.0.1:1"})), Namespace: "ns", Name: "lease",
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	}
	a, b := must(leaderelection.New(cfg)).Identity(), must(leaderelection.New(cfg)).Identity()
	host := must(os.Hostname())
	require.Regexp(t, "^"+regexp.QuoteMeta(host)+"_[0-9a-f]{16}$", a)
	require.NotEqual(t, a, b)
}
