package reflector

import (
	"bytes"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
)

// A protobuf LIST answer of a few bytes whose length prefixes claim
// 2 GiB is an error, and decoding it allocates about what arrived, not
// what the prefixes claim, as the CBOR reader does
// (TestAHostileCBORListIsAnErrorNotACrashOrAHugeAllocation): a corrupt
// or hostile 10-byte body must not OOM-kill a small controller. (Found
// by a bug hunt: the type header, the list's metadata and an item were
// each allocated at their claimed size before any byte came.)
func TestAProtobufLengthPrefixClaimingGigabytesAllocatesNoGigabytes(t *testing.T) {
	const claim = 1 << 31 // eachField's own bound
	typeMeta := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("v1"))
	typeMeta = protowire.AppendBytes(protowire.AppendTag(typeMeta, 2, protowire.BytesType), []byte("ConfigMapList"))
	withTypeMeta := protowire.AppendBytes(protowire.AppendTag(bytes.Clone(protobufPrefix), 1, protowire.BytesType), typeMeta)

	bodies := map[string][]byte{
		// typeMeta claiming 2 GiB: readN makes a 2 GiB slice.
		"typeMeta": protowire.AppendVarint(protowire.AppendTag(bytes.Clone(protobufPrefix), 1, protowire.BytesType), claim),
		// one item claiming 256 MiB inside a raw that claims 2 GiB:
		// itemDecoder.add grows its batch buffer (and zeroes it: slices.Grow)
		// to the claim. 256 MiB keeps the probe cheap; 2 GiB - 16 allocates
		// (and clears) 2 GiB in the same way.
		"item": protowire.AppendVarint(protowire.AppendTag(
			protowire.AppendVarint(protowire.AppendTag(bytes.Clone(withTypeMeta), 2, protowire.BytesType), claim),
			2, protowire.BytesType), 256<<20),
		// the list's metadata claiming 2 GiB: readN again.
		"metadata": protowire.AppendVarint(protowire.AppendTag(
			protowire.AppendVarint(protowire.AppendTag(bytes.Clone(withTypeMeta), 2, protowire.BytesType), claim),
			1, protowire.BytesType), claim-16),
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := decodeProtobufList(bytes.NewReader(body), cmListType, func([]*corev1.ConfigMap) error { return nil })
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("a %d-byte body claiming 2 GiB decoded without error", len(body))
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			if allocated > 128<<20 { // the claims are 256 MiB and 2 GiB; this is noise's room
				t.Fatalf("decoding a %d-byte protobuf body allocated %d MiB (its length prefix claims 2 GiB); err = %v", len(body), allocated>>20, err)
			}
		})
	}
}
