package sharedinformer_test

import (
	"os"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// The integration tests share one real control plane, with an audit log:
// a test counts its own requests by giving its client a user agent of
// its own. It authorizes with RBAC, so that the user viewer, given no
// role, gets real 403s; the admin, whom every other test is, may do
// anything. The unit tests, which use memlistwatch, do not touch it.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Audit: true, RBAC: true, Users: []string{"viewer"}}))
}
