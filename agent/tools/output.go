package tools

import (
	"fmt"
	"sync"
)

// boundedOutput keeps what a command writes within a bound: its first and its last bytes, counting what it
// drops between them. A command that writes gigabytes costs the daemon no more than the bound; the model sees
// at most Limits.OutputChars of it anyway.
type boundedOutput struct {
	mu      sync.Mutex
	half    int
	head    []byte
	tail    []byte
	dropped int64
}

// newBoundedOutput keeps up to about max bytes.
func newBoundedOutput(max int) *boundedOutput {
	return &boundedOutput{half: max / 2}
}

func (b *boundedOutput) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.half - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > 2*b.half { // keep the last half, in place: the tail never grows past twice the bound
		drop := len(b.tail) - b.half
		b.dropped += int64(drop)
		b.tail = b.tail[:copy(b.tail, b.tail[drop:])]
	}
	return n, nil
}

// String is the head, a line saying how much was dropped (when anything was), and the tail.
func (b *boundedOutput) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return string(b.head) + string(b.tail)
	}
	return string(b.head) + fmt.Sprintf("\n[… %d bytes of output omitted …]\n", b.dropped) + string(b.tail)
}
