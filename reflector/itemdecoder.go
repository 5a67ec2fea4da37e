package reflector

import (
	"bufio"
	"runtime"
	"sync"

	"github.com/listwatch/informer"
)

// itemDecoder decodes the items of one LIST answer into Ts on up to
// GOMAXPROCS goroutines, a batch at a time, and hands each decoded batch
// to deliver in list order, from the reading goroutine, as soon as it and
// every batch before it are decoded. The reader (decodeProtobufList or
// decodeJSONList) finds where each item's bytes begin and end; decodeItem
// turns one item's bytes into an object, and must not keep the bytes,
// whose buffer is reused.
type itemDecoder[T informer.Object] struct {
	decodeItem func(data []byte, index int) (T, error)
	// pending are the batches handed to a decoder and not yet delivered,
	// in list order. Only the reading goroutine touches it.
	pending []*itemBatch[T]
	current *itemBatch[T]
	next    int // the list index of the next item read
	work    chan *itemBatch[T]
	workers sync.WaitGroup
	deliver func([]T) error
	// failed is the first item that did not decode, or deliver's first
	// error; from then on nothing more is read or delivered.
	failed error
}

// itemBatch is some consecutive items: their bytes back to back, where
// each ends, and, once decoded (done closed), the objects or the first
// error.
type itemBatch[T informer.Object] struct {
	data  *[]byte
	ends  []int
	first int // the list index of the batch's first item, for errors
	items []T
	err   error
	done  chan struct{}
}

// batchBuffers holds the batches' buffers between lists, shared by every
// decoder: each LIST answer is read into them, however small. A pool of
// each decoder's own outlived its list by two garbage collections (every
// sync.Pool is referenced from the runtime until then), so a process
// that made many small LISTs (pages, relists) between collections kept a
// buffer of batchBytes for each, live, and grew its next collection's
// target by as much: a simulator's sweep grew to 12 GB.
var batchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, batchBytes); return &b }}

// putBatchBuffer gives a batch's buffer back to batchBuffers, emptied;
// one grown far past batchBytes by a large item is left to the collector.
func putBatchBuffer(b *[]byte) {
	if cap(*b) > 2*batchBytes {
		return
	}
	*b = (*b)[:0]
	batchBuffers.Put(b)
}

func newItemDecoder[T informer.Object](decodeItem func(data []byte, index int) (T, error), deliver func([]T) error) *itemDecoder[T] {
	d := &itemDecoder[T]{decodeItem: decodeItem, work: make(chan *itemBatch[T]), deliver: deliver}
	for range runtime.GOMAXPROCS(0) {
		d.workers.Go(func() {
			for b := range d.work {
				d.decode(b)
			}
		})
	}
	return d
}

// add reads one item of size bytes from r into the current batch: the
// way a protobuf item, whose size comes before it, is read.
func (d *itemDecoder[T]) add(r *bufio.Reader, size int) error {
	return d.addWith(func(buf []byte) ([]byte, error) {
		return appendN(buf, r, size)
	})
}

// addWith adds one item to the current batch: read appends the item's
// bytes to the batch's buffer and returns it. The batch goes to a decoder
// once it is full.
func (d *itemDecoder[T]) addWith(read func(buf []byte) ([]byte, error)) error {
	if d.failed != nil {
		return d.failed
	}
	if d.current == nil {
		d.current = &itemBatch[T]{data: batchBuffers.Get().(*[]byte), first: d.next, done: make(chan struct{})}
	}
	b := d.current
	var err error
	if *b.data, err = read(*b.data); err != nil {
		return err
	}
	b.ends = append(b.ends, len(*b.data))
	d.next++
	if len(*b.data) >= batchBytes || len(b.ends) >= batchItems {
		d.flush()
	}
	return nil
}

// flush hands the current batch to a decoder, then delivers what is
// decoded. A batch that holds no item (opened for an item whose reading
// failed) is dropped: no part is ever empty.
func (d *itemDecoder[T]) flush() {
	if d.current == nil {
		return
	}
	if len(d.current.ends) == 0 {
		putBatchBuffer(d.current.data)
		d.current = nil
		return
	}
	d.pending = append(d.pending, d.current)
	d.work <- d.current
	d.current = nil
	d.deliverDecoded(false)
}

// maxPending is how many batches, per decoder, may wait decoded or being
// decoded before the reading waits for the oldest: it bounds the memory
// in flight when a batch decodes slowly.
const maxPending = 2

// deliverDecoded delivers the batches at the front of pending that are
// decoded; all of them if wait, waiting for each.
func (d *itemDecoder[T]) deliverDecoded(wait bool) {
	for len(d.pending) > 0 {
		b := d.pending[0]
		if wait || len(d.pending) > maxPending*runtime.GOMAXPROCS(0) {
			<-b.done
		} else {
			select {
			case <-b.done:
			default:
				return // the oldest is still being decoded
			}
		}
		d.pending[0] = nil
		d.pending = d.pending[1:]
		if d.failed == nil {
			d.failed = b.err
		}
		if d.failed == nil {
			d.failed = d.deliver(b.items)
		}
	}
}

// decode decodes every item of b, then gives its buffer back.
func (d *itemDecoder[T]) decode(b *itemBatch[T]) {
	defer close(b.done)
	b.items = make([]T, 0, len(b.ends))
	start := 0
	for i, end := range b.ends {
		obj, err := d.decodeItem((*b.data)[start:end], b.first+i)
		if err != nil {
			b.err = err
			break
		}
		b.items = append(b.items, obj)
		start = end
	}
	putBatchBuffer(b.data)
	b.data = nil
}

// finish delivers every batch read, stops the decoders, and returns the
// first error: an item that did not decode, or deliver's.
func (d *itemDecoder[T]) finish() error {
	d.flush()
	d.deliverDecoded(true)
	close(d.work)
	d.workers.Wait()
	return d.failed
}
