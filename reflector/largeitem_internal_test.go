package reflector

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A protobuf LIST of 64 ConfigMaps of 1 MiB each (large Secrets or
// ConfigMaps are common) decodes with allocations of about what it
// holds: each item read into one buffer, not regrown as it arrives.
// (Found by a review of 0bdcf94, which grew every buffer 64 KiB at a
// time: 5x the body.)
func TestALargeItemIsReadWithoutRegrowingItsBuffer(t *testing.T) {
	const items, itemBytes = 64, 1 << 20
	var raw []byte
	meta, err := (&metav1.ListMeta{ResourceVersion: "7"}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw = protowire.AppendBytes(protowire.AppendTag(raw, 1, protowire.BytesType), meta)
	for i := range items {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: strings.Repeat("x", 10) + string(rune('a'+i%26)) + string(rune('a'+i/26)), ResourceVersion: "7"},
			Data: map[string]string{"blob": strings.Repeat("y", itemBytes)}}
		b, err := cm.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		raw = protowire.AppendBytes(protowire.AppendTag(raw, 2, protowire.BytesType), b)
	}
	typeMeta := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("v1"))
	typeMeta = protowire.AppendBytes(protowire.AppendTag(typeMeta, 2, protowire.BytesType), []byte("ConfigMapList"))
	body := protowire.AppendBytes(protowire.AppendTag(bytes.Clone(protobufPrefix), 1, protowire.BytesType), typeMeta)
	body = protowire.AppendBytes(protowire.AppendTag(body, 2, protowire.BytesType), raw)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	_, err = decodeProtobufList(bytes.NewReader(body), cmListType, func(part []*corev1.ConfigMap) error { n += len(part); return nil })
	runtime.ReadMemStats(&after)
	if err != nil || n != items {
		t.Fatalf("decoded %d items: %v", n, err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	// The objects themselves (their strings: ~1 MiB each) plus one buffer
	// per item: about 2x the body. Allow 3x.
	if allocated > 3*uint64(len(body)) {
		t.Fatalf("decoding a %d MiB list of %d MiB items allocated %d MiB (%.1fx the body)", len(body)>>20, itemBytes>>20, allocated>>20, float64(allocated)/float64(len(body)))
	}
	t.Logf("allocated %d MiB for a %d MiB body", allocated>>20, len(body)>>20)
}
