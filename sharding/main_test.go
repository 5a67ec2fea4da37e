package sharding_test

import (
	"os"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// The integration tests share one real control plane; the ring's unit
// tests do not touch it.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
