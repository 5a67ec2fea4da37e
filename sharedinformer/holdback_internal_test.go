package sharedinformer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/informer/reflector"
)

func TestAListIsHeldBackForAtMostAQuarterOfTheClientsTimeout(t *testing.T) {
	cases := []struct {
		name     string
		timeout  time.Duration
		holdBack time.Duration
		want     time.Duration
	}{
		{"no client timeout: the reflector's default", 0, 0, 0},
		{"a client timeout: a quarter of it", 10 * time.Second, 0, 2500 * time.Millisecond},
		{"a long client timeout: the default, never longer", 5 * time.Minute, 0, reflector.DefaultHoldBack},
		{"one asked for within it is kept", 10 * time.Second, time.Second, time.Second},
		{"one asked for past it is shortened", 10 * time.Second, time.Minute, 2500 * time.Millisecond},
		{"never holding back stays so", 10 * time.Second, -1, -1},
	}
	for _, c := range cases {
		got := holdBackWithin(c.timeout, reflector.Tuning{HoldBack: c.holdBack})
		assert.Equal(t, c.want, got.HoldBack, c.name)
	}
}
