package readyourwrites_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/workqueue"
)

// Options.Name labels the guard's metrics; its trace events carry no
// name of their own: the hook is the guard's alone (Options.Trace), so
// the caller that passes it knows which guard calls it, and a hook shared
// by two guards tells their events apart by the owner's key only.
func TestAGuardsTraceEventsCarryNoNameTheHookIsTheGuardsOwn(t *testing.T) {
	inf, api := newCache(t) // never run: the key stays held
	var events []informer.TraceEvent
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "secrets", Clock: workqueue.NewFakeClock(time.Unix(0, 0)),
		Trace: func(e informer.TraceEvent) { events = append(events, e) }}))
	written := must(api.Create(configMap("settings")))
	require.NoError(t, readyourwrites.Track(guard, inf).Wrote(owner, written))

	held, _, _ := guard.Hold(owner)
	require.True(t, held)
	require.Len(t, events, 1)
	assert.Equal(t, informer.StageGuard, events[0].Stage)
	assert.Equal(t, readyourwrites.KindHeld, events[0].Kind)
	assert.Equal(t, owner.String(), events[0].Key)
	e := events[0]
	assert.NotContains(t, strings.Join([]string{e.Key, e.ResourceVersion, e.Detail, e.Reason}, " "), "secrets",
		"the event names the owner, not the guard")
}
