package events

import (
	"os"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// The integration test runs against one real control plane; the unit
// tests use a fakeSink and do not touch it.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
