package workqueue

import "github.com/listwatch/informer"

// Clock is where a [Queue] gets the time: for delayed keys, for the time
// it hands to its [RateLimiter], and for the Time of its trace events. It
// is the root package's informer.Clock, shared by every stage; tests and
// examples pass a [FakeClock].
//
// The Queue calls AfterFunc while holding its lock, and the function
// takes that lock: that is why a Clock must never run f inside AfterFunc.
type Clock = informer.Clock

// Timer cancels a function scheduled with Clock.AfterFunc. *time.Timer
// satisfies it.
type Timer = informer.Timer
