package reflector_test

import (
	"os"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// The integration tests share one control plane with an audit log; each
// counts its own requests by a user agent of its own (see agent). Those
// that restart the apiserver or change its flags start their own.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Audit: true})) }
