package simulation_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/informer/simulation"
)

// Check draws the seed's schedule from the Options before Run validates
// them: Options that cannot run must fail the test with the error that
// names the option, as Run's do (TestOptionsThatCannotRunAreAnErrorNamingTheOption),
// not panic in the draw. Each case runs in a process of its own, since
// Check fails the test it is given.
func TestCheckWithOptionsThatCannotRunFailsNamingTheOption(t *testing.T) {
	cases := map[string]struct {
		opts simulation.Options
		want string
	}{
		"replicas": {simulation.Options{Replicas: -1}, "Options.Replicas -1"},
		"faults":   {simulation.Options{Faults: -time.Minute}, "Options.Faults -1m0s"},
	}
	if name := os.Getenv("SIM_CHECK_OPTIONS"); name != "" {
		simulation.Check(t, cases[name].opts, nil)
		return
	}
	for name, tc := range cases {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "SIM_CHECK_OPTIONS="+name)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "panic:") {
			t.Errorf("Check(%+v, nil): want a failure naming %q and no panic; got:\n%s", tc.opts, tc.want, firstLines(string(out), 12))
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
