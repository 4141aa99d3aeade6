package storage

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Sizes of the decoder's batches: a batch goes to the workers when it holds this many messages or bytes; a
// buffer grown past maxBatchKeep (by a huge message) is not kept for the next batch.
const (
	batchMessages = 256
	batchBytes    = 256 << 10
	maxBatchKeep  = 4 << 20
)

// decoder decodes stored messages into their slots of out on GOMAXPROCS goroutines while the caller goes on
// reading the store: add copies each value into a batch (Badger's buffer is valid only during the iteration
// step), and a full batch goes to the workers. A read smaller than one batch is decoded on the caller's
// goroutine. At most 2 batches per worker are in flight, so the copies stay small whatever the view's size.
type decoder struct {
	id      string
	out     []transcript.Message
	cur     *batch
	work    chan *batch
	free    chan *batch
	started bool
	done    bool
	wg      sync.WaitGroup

	mu     sync.Mutex
	err    error
	errSeq uint64
}

// batch is a run of stored values: value i is buf[start:ends[i]] (start: the previous end), the message of
// sequence seqs[i] for slot idx[i] of out.
type batch struct {
	buf  []byte
	ends []int
	idx  []int
	seqs []uint64
}

func newDecoder(id string, out []transcript.Message) *decoder {
	return &decoder{id: id, out: out, cur: &batch{}}
}

// add queues the stored value v of message seq for slot idx.
func (d *decoder) add(idx int, seq uint64, v []byte) {
	b := d.cur
	b.buf = append(b.buf, v...)
	b.ends, b.idx, b.seqs = append(b.ends, len(b.buf)), append(b.idx, idx), append(b.seqs, seq)
	if len(b.ends) < batchMessages && len(b.buf) < batchBytes {
		return
	}
	if !d.started {
		d.start()
	}
	d.work <- b
	d.cur = <-d.free
}

// start launches the workers and fills the pool of batches.
func (d *decoder) start() {
	d.started = true
	n := max(runtime.GOMAXPROCS(0), 1)
	d.work, d.free = make(chan *batch, n), make(chan *batch, 2*n)
	for range 2*n - 1 {
		d.free <- &batch{}
	}
	d.wg.Add(n)
	for range n {
		go func() {
			defer d.wg.Done()
			for b := range d.work {
				d.decode(b)
				d.free <- b
			}
		}()
	}
}

// decode decodes every value of b into its slot and empties b for reuse.
func (d *decoder) decode(b *batch) {
	start := 0
	for i, end := range b.ends {
		m := &d.out[b.idx[i]]
		if err := transcript.UnmarshalMessage(b.buf[start:end], m); err != nil {
			d.fail(b.seqs[i], err)
		}
		m.Measure()
		start = end
	}
	if cap(b.buf) > maxBatchKeep {
		b.buf = nil
	}
	b.buf, b.ends, b.idx, b.seqs = b.buf[:0], b.ends[:0], b.idx[:0], b.seqs[:0]
}

// fail records the error of message seq; the error of the lowest sequence is the one reported.
func (d *decoder) fail(seq uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil || seq < d.errSeq {
		d.err, d.errSeq = fmt.Errorf("decoding message %d of session %s: %w", seq, d.id, err), seq
	}
}

// close decodes what is left, waits for the workers and returns the first decoding error. It may be called
// again (a deferred call after an early return).
func (d *decoder) close() error {
	if !d.done {
		d.done = true
		if !d.started {
			d.decode(d.cur)
		} else {
			d.work <- d.cur
			close(d.work)
			d.wg.Wait()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}
