package leaderelection_test

import (
	"os"
	"testing"

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) {
	runCandidateIfAsked() // a re-executed test binary is a candidate, not a test run
	os.Exit(testenv.Main(m, testenv.Options{}))
}
