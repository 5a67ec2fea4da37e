package reflector

import (
	"bytes"
	"testing"
	"testing/iotest"
)

// A length-prefixed field is read into one buffer of its size, not
// regrown as it arrives, up to 16 MiB (an object of 1 MiB, as large
// Secrets and ConfigMaps are, is one allocation however its bytes come);
// a larger claim is regrown a few times, by what has come. (Found by a
// review of 0bdcf94, which grew every buffer 64 KiB at a time: a list of
// 1 MiB objects allocated 5x its body.)
func TestALargeItemIsReadWithoutRegrowingItsBuffer(t *testing.T) {
	for _, c := range []struct{ size, buffers int }{{1 << 20, 3}, {40 << 20, 8}} {
		body := bytes.Repeat([]byte{'y'}, c.size)
		allocs := testing.AllocsPerRun(5, func() {
			// Two allocations are the readers'; the rest are buffers (one
			// for 1 MiB, three for 40 MiB; -race adds a few).
			buf, err := appendN(nil, iotest.HalfReader(bytes.NewReader(body)), c.size)
			if err != nil || len(buf) != c.size {
				t.Fatalf("appendN of %d bytes: %d read, err %v", c.size, len(buf), err)
			}
		})
		if buffers := int(allocs) - 2; buffers > c.buffers {
			t.Errorf("a %d MiB field took %d buffers as it came, want at most %d", c.size>>20, buffers, c.buffers)
		}
	}
}
