package simulation_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/listwatch/informer/simulation"
)

// A seed chooses the faults and their timing: the same seed draws the
// same schedule, which is what makes a failing seed a one-line replay.
// Here, the first faults seed 7 draws for three replicas.
func ExampleNewSchedule() {
	sched := simulation.NewSchedule(7, 3, 30*time.Second)
	for _, f := range sched[:3] {
		fmt.Println(strings.TrimSpace(f.String()))
	}
	fmt.Println("the same again:", simulation.NewSchedule(7, 3, 30*time.Second).String() == sched.String())
	// Output:
	// 3.5s errors r0 for 3s p=0.32 status=503
	// 6.3s skew r2 for 17.7s rate 0.96
	// 10.6s lag r2 for 6.9s
	// the same again: true
}
