package reflector

import (
	"io"

	"github.com/fxamacker/cbor/v2"
	"k8s.io/apimachinery/pkg/runtime"
)

// cborSeqFramer cuts a CBOR watch (application/cbor-seq) into its events,
// as apimachinery's cbor.NewFramer does, but with the limits its CBOR
// decoder has (10,000 levels, 2^31-1 array elements, 2,097,152 map
// pairs), not the cbor library's defaults (32 levels, 131,072 elements
// and pairs): an object the CBOR LIST reads must come through a watch
// too (TestACBORWatchEventOfADeepOrLongCustomResourceIsDelivered).
type cborSeqFramer struct{}

var cborSeqDecMode = func() cbor.DecMode {
	dm, err := cbor.DecOptions{
		MaxNestedLevels:  10000,
		MaxArrayElements: 2147483647,
		MaxMapPairs:      2097152,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

func (cborSeqFramer) NewFrameReader(rc io.ReadCloser) io.ReadCloser {
	return &cborFrameReader{decoder: cborSeqDecMode.NewDecoder(rc), closer: rc}
}

func (cborSeqFramer) NewFrameWriter(w io.Writer) io.Writer { return w }

var _ runtime.Framer = cborSeqFramer{}

// cborFrameReader is apimachinery's CBOR frame reader: one data item per
// Read, io.ErrShortBuffer while a large one is handed over in pieces.
type cborFrameReader struct {
	decoder  *cbor.Decoder
	closer   io.Closer
	overflow []byte
}

func (fr *cborFrameReader) Read(dst []byte) (int, error) {
	if len(fr.overflow) > 0 {
		n := copy(dst, fr.overflow)
		if n < len(fr.overflow) {
			fr.overflow = fr.overflow[n:]
			return n, io.ErrShortBuffer
		}
		fr.overflow = nil
		return n, nil
	}
	m := cbor.RawMessage(dst[0:0:len(dst)])
	if err := fr.decoder.Decode(&m); err != nil {
		return 0, err
	}
	if len(m) > len(dst) {
		fr.overflow = m[len(dst):]
		return copy(dst, m), io.ErrShortBuffer
	}
	return len(m), nil
}

func (fr *cborFrameReader) Close() error { return fr.closer.Close() }
