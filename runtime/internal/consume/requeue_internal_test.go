package consume

import (
	"fmt"
	"testing"
)

// The consumer's own count of requeues, where the broker keeps none, stays
// bounded however many messages it sees, and forgets what was settled.
func TestRequeueCountsStayBounded(t *testing.T) {
	var r requeueCounts
	for i := range maxRequeueCounts + 500 {
		r.add(fmt.Sprint(i))
	}
	if n := len(r.n); n > maxRequeueCounts {
		t.Fatalf("%d counts kept, want at most %d", n, maxRequeueCounts)
	}
	if r.count("0") != 0 || r.count(fmt.Sprint(maxRequeueCounts+499)) != 1 {
		t.Errorf("the oldest count must go first: count(0) = %d, newest = %d", r.count("0"), r.count(fmt.Sprint(maxRequeueCounts+499)))
	}
	r.add("x")
	r.add("x")
	if r.count("x") != 2 {
		t.Errorf("count(x) = %d, want 2", r.count("x"))
	}
	for i := range 3 * maxRequeueCounts { // churn: added and settled
		k := fmt.Sprint("churn", i)
		r.add(k)
		r.forget(k)
	}
	if len(r.order) > 2*len(r.n)+64 {
		t.Errorf("order holds %d keys for %d counts: forgotten keys are not compacted", len(r.order), len(r.n))
	}
}
