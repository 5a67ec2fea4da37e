package ownership_test

import (
	"os"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// The copier test runs against one real control plane; the Mark's unit
// tests do not touch it.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
