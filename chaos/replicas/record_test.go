package replicas

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A replica prints one line per thing the checker needs, each line ending
// in this host's wall clock in Unix nanoseconds. All replicas run on one
// machine, so the checker reads every line on one clock.
//
//	member  <ring> <member>                          a term began
//	stopped <ring> <member> <deadline-nanos>         it ended; its last deadline
//	leading <ring> <true|false>                      this process's sharder was elected or stepped down
//	label   <ring> <action> <key> <member|->         the sharder PATCHed a label
//	B       <ring> <member> <key>                    a reconcile began
//	E       <ring> <member> <key>                    it returned
//	W       <ring> <member> <key> <object> <outcome> <late> <sent-nanos>
//	                                                 a resourceVersion-guarded write, sent at sent-nanos;
//	                                                 late is 1 when it was sent after the term's deadline
//	C       <ring> <member> <key> <child> <outcome>  a create of a child
//	error   <words...>                               the replica could not run
type recorder struct {
	mu  sync.Mutex
	out io.Writer
}

// say prints one line, with the time appended.
func (r *recorder) say(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format+" %d\n", append(args, time.Now().UnixNano())...)
}

// event is one line a replica printed, as the checker reads it.
type event struct {
	proc   string    // the process that printed it
	kind   string    // the first word
	fields []string  // the words between the kind and the time
	at     time.Time // the time the line ends with
}

// readEvents parses the lines of one process until r ends, handing each
// event to record. Lines that do not end in a time are not events (a
// panic's trace, say) and are passed to other.
func readEvents(proc string, r io.Reader, record func(event), other func(string)) {
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) < 2 {
			other(lines.Text())
			continue
		}
		ns, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		if err != nil {
			other(lines.Text())
			continue
		}
		record(event{proc: proc, kind: fields[0], fields: fields[1 : len(fields)-1], at: time.Unix(0, ns)})
	}
}

// nanos parses a field that holds Unix nanoseconds.
func nanos(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Unix(0, n)
}
