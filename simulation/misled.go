package simulation

import "time"

// misledAnswer is a discovery request of a replica's, for the CRD's
// group, that a flip was under way for when it was served: the look it
// belonged to may have read a move half done, and judged the resource
// gone.
type misledAnswer struct {
	flip    int // which flip, from crdWorld.flips
	request int // which discovery request, from crdWorld.requests: one answer, whatever flips it met
	at      time.Time
}

// misledWindow is how far back misledTwice looks for the two looks of a
// "gone" verdict. The reflector believes "gone" only when a second
// check, BackoffInitial (800 ms here) after the first, says it too, each
// judged by a look of its own. Discovery requests meet no latency fault
// (link.inject: errors only,
// TestALatencyWindowDelaysNoDiscoveryRequest), so the looks are that far
// apart, plus the age of a look the first check shares (up to the
// factory's one second) and the checks' turns; 5 s leaves room for them.
const misledWindow = 5 * time.Second

// misledTwice reports whether replica's discovery answers in the
// misledWindow before at were served during two different flips, by two
// different requests (which look, or other discovery request, each
// answered is not known): then both looks of a "gone" verdict may each
// have read a move half done, which chapter 06 documents as the case two
// looks cannot rule out ("The second look lowers the odds; it proves
// nothing"), and emptying the cache as if the resource were deleted is
// what the library promises there, not a bug. One flip is not enough:
// the second look is asked after the first's, so a flip can mislead only
// one of them. Nor is one request that met two flips: it is one answer,
// to one look (TestOneDiscoveryRequestThatMetTwoFlipsIsOneAnswer).
func (c *crdWorld) misledTwice(replica string, at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var in []misledAnswer
	for _, a := range c.misled[replica] {
		if !a.at.Before(at.Add(-misledWindow)) && !a.at.After(at) {
			in = append(in, a)
		}
	}
	for i, a := range in {
		for _, b := range in[i+1:] {
			if a.flip != b.flip && a.request != b.request {
				return true
			}
		}
	}
	return false
}
