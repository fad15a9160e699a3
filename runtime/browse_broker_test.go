package runtime_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// Browse reads without consuming: the queue is whole and in its order the
// moment Browse returns; fn may take a message with Ack; max bounds it.
func TestBrowse(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "browse")
	rawQueue(t, q, nil)
	ids := fill(t, q, "elsewhere", 2000)
	var seen []string
	n, err := c.Browse(ctxFor(t, wait), q, 0, func(d *runtime.Delivery) error {
		seen = append(seen, d.Envelope.ID)
		if d.Envelope.Error == "" || d.Envelope.Queue != "elsewhere" {
			t.Errorf("envelope %+v", d.Envelope)
		}
		return nil
	})
	if err != nil || n != len(ids) || !slices.Equal(seen, ids) {
		t.Fatalf("Browse read %d (%v), in order: %v", n, err, slices.Equal(seen, ids))
	}
	if got := idsOn(t, q); !slices.Equal(got, ids) {
		t.Fatalf("after Browse the queue holds %d messages, not the %d in their order", len(got), len(ids))
	}

	// (idsOn's consumer stays until the end: the next steps use queues of
	// their own.)
	q = brokertest.Queue(t, "browse-max")
	rawQueue(t, q, nil)
	fill(t, q, "elsewhere", 5)
	seen = nil
	n, err = c.Browse(ctxFor(t, wait), q, 3, func(d *runtime.Delivery) error {
		seen = append(seen, d.Envelope.ID)
		if d.Envelope.ID == "id-000001" {
			return d.Ack(ctxFor(t, wait))
		}
		return nil
	})
	if err != nil || n != 3 || !slices.Equal(seen, []string{"id-000000", "id-000001", "id-000002"}) {
		t.Fatalf("max 3: %d %v %v", n, seen, err)
	}
	if got := idsOn(t, q); !slices.Equal(got, []string{"id-000000", "id-000002", "id-000003", "id-000004"}) {
		t.Errorf("after an Ack inside Browse the queue holds %v", got)
	}

	stop := errors.New("enough")
	q = brokertest.Queue(t, "browse-stop")
	rawQueue(t, q, nil)
	fill(t, q, "elsewhere", 3)
	if n, err := c.Browse(ctxFor(t, wait), q, 0, func(*runtime.Delivery) error { return stop }); n != 1 || !errors.Is(err, stop) {
		t.Errorf("fn's error: %d %v", n, err)
	}
	waitDepth(t, q, 3, wait)
	if _, err := c.Browse(ctxFor(t, wait), q+".missing", 0, func(*runtime.Delivery) error { return nil }); !errors.Is(err, runtime.ErrQueueNotFound) {
		t.Errorf("missing queue: %v", err)
	}
}
