package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// The index keeps at most maxRows rows, whatever the queues hold; the
// groups still count every message, with their first and last seen.
func TestIndexBounded(t *testing.T) {
	x := newIndex([]string{"orders.new.dlq", "orders.new.parked"}, 100)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range 1000 {
		d := &runtime.Delivery{Body: []byte(fmt.Sprintf(`{"n":%d}`, i)), Envelope: runtime.Envelope{
			ID: fmt.Sprintf("A-%d", i), Type: "order.placed.v1", Origin: "shop@host", Attempt: 5,
			FirstSeen: at.Add(time.Duration(i) * time.Second),
			Error:     fmt.Sprintf("gave up after 5 attempts: order A-%d: warehouse %q down", i, fmt.Sprint("w", i%3)),
		}}
		x.add(uint16(i%2), i/2, d)
	}
	if len(x.rows) != 100 || x.dropped != 900 || x.read != 1000 {
		t.Fatalf("rows %d, dropped %d, read %d", len(x.rows), x.dropped, x.read)
	}
	groups, all, pass := x.Groups(ByReason, Filter{}, "", 0)
	if all != 1 || groups[0].Key != `gave up after # attempts: order #: warehouse "…" down` || groups[0].Count != 1000 ||
		groups[0].Oldest != "2026-11-30T09:00:00.000Z" || groups[0].Newest != "2026-11-30T09:16:39.000Z" ||
		groups[0].Sources["orders.new.dlq"] != 500 || groups[0].Sources["orders.new.parked"] != 500 {
		t.Errorf("groups: %d %+v", all, groups)
	}
	if pass.Rows != 100 || pass.NotIndexed != 900 {
		t.Errorf("pass: %+v", pass)
	}
	byQueue, _, _ := x.Groups(ByQueue, Filter{}, "", 0)
	if len(byQueue) != 2 || byQueue[0].Count != 500 {
		t.Errorf("by queue: %+v", byQueue)
	}
	// A key is the same for the same message, and differs for another.
	a := runtime.Envelope{ID: "A-1", Attempt: 2, FirstSeen: at}
	if keyOf(a, []byte("x")) != keyOf(a, []byte("x")) || keyOf(a, []byte("x")) == keyOf(a, []byte("y")) {
		t.Error("keyOf")
	}
	b := a
	b.Attempt = 3
	if keyOf(a, nil) == keyOf(b, nil) {
		t.Error("keyOf ignores the attempt")
	}
	if k, err := parseKey(keyOf(a, nil).String()); err != nil || k != keyOf(a, nil) {
		t.Errorf("parseKey: %v", err)
	}
}
