package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// A queue holds keys, each at most once, and never hands a key to a
// second worker while a first one holds it.
func ExampleQueue() {
	ctx := context.Background()
	q := workqueue.New(workqueue.Options[string]{})
	defer q.ShutDown()

	q.Add("default/web") // three updates to web before any worker looks...
	q.Add("default/db")
	q.Add("default/web") // ...are one key in the queue, in its first place
	q.Add("default/web")
	fmt.Println("queued:", q.Len())

	key, _ := q.Get(ctx) // a worker takes web
	fmt.Println("got:", key)
	q.Add("default/web") // web changes while the worker holds it:
	fmt.Println("queued:", q.Len(), "(web waits for Done)")
	q.Done(key) // the worker finishes; web is queued again
	fmt.Println("queued:", q.Len())

	for q.Len() > 0 {
		key, _ := q.Get(ctx)
		fmt.Println("got:", key)
		q.Done(key)
	}
	// Output:
	// queued: 2
	// got: default/web
	// queued: 1 (web waits for Done)
	// queued: 2
	// got: default/db
	// got: default/web
}

// AddAfter keeps keys in a heap by due time; a FakeClock decides when time
// passes, so this runs the same every time and waits for nothing.
func ExampleQueue_AddAfter() {
	clock := workqueue.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.New(workqueue.Options[string]{Clock: clock})
	defer q.ShutDown()

	q.AddAfter("resync/a", 30*time.Second)
	q.AddAfter("resync/b", 10*time.Second)
	q.AddAfter("resync/a", 5*time.Second)  // already waiting: the earlier time wins
	q.AddAfter("resync/b", 20*time.Second) // later than its 10s: ignored

	for _, step := range []time.Duration{4 * time.Second, time.Second, 5 * time.Second} {
		clock.Step(step)
		fmt.Printf("after %v: %d queued\n", clock.Now().Format("05s"), q.Len())
	}
	// Output:
	// after 04s: 0 queued
	// after 05s: 1 queued
	// after 10s: 2 queued
}

// Run drives the workers: a failed reconcile is retried through the rate
// limiter, and metrics derived from the trace count what happened.
func ExampleRun() {
	clock := workqueue.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	metrics := workqueue.NewMetrics()
	// Retry the first 3 failures of a key at once, later ones after 1m.
	limiter, err := workqueue.NewFastSlowRateLimiter[string](0, time.Minute, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	q := workqueue.New(workqueue.Options[string]{
		RateLimiter: limiter,
		Clock:       clock,
		Trace:       metrics.Observe,
	})
	defer q.ShutDown()

	var reconciled sync.WaitGroup // only so that the example knows when to stop
	reconciled.Add(3)
	failedOnce := false
	reconcile := func(ctx context.Context, key string) (workqueue.Result, error) {
		if key == "default/b" && !failedOnce {
			failedOnce = true
			fmt.Println("reconcile", key, "-> conflict")
			return workqueue.Result{}, errors.New("conflict")
		}
		fmt.Println("reconcile", key, "-> ok")
		reconciled.Done()
		return workqueue.Result{}, nil
	}
	for _, key := range []string{"default/a", "default/b", "default/c"} {
		q.Add(key)
	}

	ctx, stop := context.WithCancel(context.Background())
	go func() { reconciled.Wait(); stop() }()
	workqueue.Run(ctx, q, reconcile, workqueue.RunOptions[string]{
		Workers: 1, // one at a time, so the output has one order
		OnError: func(key string, err error) { fmt.Println("  error for", key+":", err) },
	})
	fmt.Println(metrics.Snapshot(clock.Now()))
	// Output:
	// reconcile default/a -> ok
	// reconcile default/b -> conflict
	//   error for default/b: conflict
	// reconcile default/c -> ok
	// reconcile default/b -> ok
	// depth 0, adds 4, retries 1, failures 1
	// queue wait: 4 × mean 0s, max 0s; work duration: 4 × mean 0s, max 0s
	// processing 0, longest running 0s, unfinished work 0s
}

// A trace hook shows each change of each key's state, in order.
func ExampleOptions_trace() {
	clock := workqueue.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.New(workqueue.Options[informer.Key]{
		Clock: clock,
		Trace: func(e informer.TraceEvent) { fmt.Println(e) },
	})
	web := informer.Key{Namespace: "default", Name: "web"}

	q.Add(web)
	q.Add(web)
	key, _ := q.Get(context.Background())
	q.AddRateLimited(key) // reconcile failed: retry after the default limiter's 5ms
	q.Done(key)
	clock.Step(5 * time.Millisecond)
	q.ShutDown()
	// Output:
	// workqueue  added  default/web
	// workqueue  deduplicated  default/web  already queued
	// workqueue  got  default/web
	// workqueue  requeued  default/web  retry 1 in 5ms
	// workqueue  delayed  default/web  in 5ms
	// workqueue  done  default/web
	// workqueue  added  default/web  delay over
	// workqueue  shut-down  1 queued, 0 processing, 0 delayed dropped
}

// client-go's default: per key, exponential from 5ms; for all keys
// together, at most 10 retries a second after a burst of 100.
func ExampleDefaultRateLimiter() {
	limiter := workqueue.DefaultRateLimiter[string]()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var delays []time.Duration
	for range 5 { // one key fails again and again
		delays = append(delays, limiter.When("default/broken", now))
	}
	fmt.Println(delays)
	for n := range 95 { // 95 more keys fail at the same moment: the burst is spent
		limiter.When(fmt.Sprint("default/key-", n), now)
	}
	fmt.Println(limiter.When("default/one-more", now), limiter.NumRequeues("default/broken"))
	// Output:
	// [5ms 10ms 20ms 40ms 80ms]
	// 100ms 5
}

// A reconcile's Result and error decide what happens to its key: a
// terminal error is given up on at once, not retried; RequeueAfter brings
// the key back later without counting a failure. The trace shows it.
func ExampleResult() {
	clock := workqueue.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	events := make(chan string, 10)
	q := workqueue.New(workqueue.Options[string]{Clock: clock, Trace: func(e informer.TraceEvent) {
		switch e.Kind {
		case workqueue.KindGot, workqueue.KindGaveUp, workqueue.KindDelayed:
			events <- e.Kind + " " + e.Key
		}
	}})
	defer q.ShutDown()

	reconcile := func(ctx context.Context, key string) (workqueue.Result, error) {
		switch key {
		case "default/bad-spec":
			return workqueue.Result{}, workqueue.Terminal(errors.New("spec.replicas is negative"))
		case "default/cert":
			return workqueue.Result{RequeueAfter: time.Hour}, nil // renew it before it expires
		}
		return workqueue.Result{}, nil
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go workqueue.Run(ctx, q, reconcile, workqueue.RunOptions[string]{OnError: func(string, error) {}})

	q.Add("default/bad-spec")
	fmt.Println(<-events)
	fmt.Println(<-events)
	q.Add("default/cert")
	fmt.Println(<-events)
	fmt.Println(<-events)
	clock.Step(time.Hour)
	fmt.Println(<-events)
	// Output:
	// got default/bad-spec
	// gave-up default/bad-spec
	// got default/cert
	// delayed default/cert
	// got default/cert
}
