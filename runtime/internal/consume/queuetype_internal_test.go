package consume

import (
	"testing"
	"time"
)

// The wait a requeue's log line names: the broker's min(min × returns, max).
func TestNativeQueuesWait(t *testing.T) {
	var k NativeQueues
	k.Note("q", time.Second, 4*time.Second)
	for count, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 4 * time.Second} {
		if got, ok := k.Wait("q", int64(count)); !ok || got != want {
			t.Errorf("wait after %d returns: %s %v, want %s", count, got, ok, want)
		}
	}
	if got, _ := k.Wait("q", 1<<62); got != 4*time.Second {
		t.Errorf("a huge count: %s, want the max", got)
	}
	if _, ok := k.Wait("other", 0); ok {
		t.Error("a queue never noted has a wait")
	}
}
