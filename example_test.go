package informer_test

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

// Every stage names objects by Key. A worker that receives a key's text form
// parses it back; a malformed one is an error, never a panic.
func ExampleParseKey() {
	k, err := informer.ParseKey("default/web")
	fmt.Println(k.Namespace, k.Name, err)

	k, err = informer.ParseKey("node-1") // cluster-scoped: no namespace
	fmt.Printf("%q %q %v\n", k.Namespace, k.Name, err)

	_, err = informer.ParseKey("a/b/c")
	fmt.Println(errors.Is(err, informer.ErrInvalidKey), err)
	// Output:
	// default web <nil>
	// "" "node-1" <nil>
	// true invalid object key "a/b/c": the name contains "/" (a key has at most one)
}

func ExampleKeyOf() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	k, _ := informer.KeyOf(cm)
	fmt.Println(k)
	// Output: default/settings
}

// A TraceHook sees what every stage does. Here two hooks, a printer and a
// counter, share the same events through Tee.
func ExampleTraceHook() {
	counts := map[informer.Stage]int{}
	count := func(e informer.TraceEvent) { counts[e.Stage]++ }
	print := func(e informer.TraceEvent) { fmt.Println(e) }
	hook := informer.Tee(print, count)

	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	hook.Emit(informer.TraceEvent{Stage: informer.StageReflector, Kind: "watch-event", Key: "default/settings", ResourceVersion: "1042", Detail: "ADDED", Time: at})
	hook.Emit(informer.TraceEvent{Stage: informer.StageFIFO, Kind: "queued", Key: "default/settings", ResourceVersion: "1042", Detail: "Added", Time: at})
	hook.Emit(informer.TraceEvent{Stage: informer.StageWorkqueue, Kind: "added", Key: "default/settings", Time: at})
	fmt.Println(counts[informer.StageReflector], counts[informer.StageFIFO], counts[informer.StageWorkqueue])
	// Output:
	// reflector  watch-event  default/settings  rv=1042  ADDED
	// deltafifo  queued  default/settings  rv=1042  Added
	// workqueue  added  default/settings
	// 1 1 1
}
