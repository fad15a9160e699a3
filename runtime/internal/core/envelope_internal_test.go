package core

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The handler's headers are a map of its own, without the x-acemq-
// namespace, empty (not nil) when nothing else is there.
func TestAppHeadersAreTheHandlersOwn(t *testing.T) {
	h := amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(2), wire.HeaderReplayedFrom: "q.dlq", "tenant": "t-1", "x-death": []any{}}
	got := AppHeaders(h)
	if len(got) != 3 || got["tenant"] != "t-1" || got[wire.HeaderReplayedFrom] != "q.dlq" || got["x-death"] == nil {
		t.Errorf("AppHeaders = %#v, want tenant, %s and x-death", got, wire.HeaderReplayedFrom)
	}
	got["added"] = 1
	if _, ok := h["added"]; ok {
		t.Error("a write into the handler's headers reached the delivery's")
	}
	for _, h := range []amqp.Table{nil, {}, {wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1)}} {
		got := AppHeaders(h)
		if got == nil || len(got) != 0 {
			t.Errorf("AppHeaders(%v) = %#v, want an empty map", h, got)
		}
		got["x"] = 1 // writable
	}
}

// The envelope's headers read in one pass over a table are the values
// its lookups read, for every header EnvelopeOf reads, present or not, of
// any type, beside others (issue 23: one pass up to EnvelopeScanMax).
func TestEnvelopeHeadersOnePassIsTheLookups(t *testing.T) {
	keys := []string{wire.HeaderID, wire.HeaderOrigin, wire.HeaderAttempt, wire.HeaderError, wire.HeaderQueue, wire.HeaderReplayedFrom, wire.HeaderReplayCount,
		wire.HeaderFirstSeen, wire.HeaderReplayedAt, headerXDeath, headerLastDeathQueue, headerLastDeathReason, headerFirstDeathQueue,
		headerFirstDeathReason, "tenant", "x-acemq-other", "traceparent"}
	values := []any{"v", []byte("b"), int64(3), int32(-1), 2.5, nil, time.Unix(1, 0), amqp.Table{"reason": "expired"},
		[]any{amqp.Table{"queue": "q", "reason": "delivery_limit", "count": int64(2)}}, "2026-12-03T06:00:00.123Z"}
	for i := range 4000 {
		h := amqp.Table{}
		for j, k := range keys {
			if (i>>(j%12)+j)%3 != 0 {
				h[k] = values[(i+j*7)%len(values)]
			}
		}
		one, each := ReadEnvelopeHeaders(h, true), ReadEnvelopeHeaders(h, false)
		apps := 0
		for k := range h {
			if !strings.HasPrefix(k, InternalPrefix) {
				apps++
			}
		}
		if one.apps != apps || each.apps != -1 {
			t.Fatalf("headers %v: one pass counted %d application headers, want %d; the lookups %d, want -1", h, one.apps, apps, each.apps)
		}
		one.apps, each.apps = 0, 0
		if !reflect.DeepEqual(one, each) {
			t.Fatalf("headers %v: one pass read %+v, the lookups %+v", h, one, each)
		}
		env := EnvelopeOf(h, "mid", "cid", "t", "ct")
		d, ok := BrokerDeath(h)
		if h[wire.HeaderQueue] == nil && ok && !(d.Reason == "expired" && wire.IsRung(d.Queue)) && env.Queue != d.Queue {
			t.Fatalf("headers %v: envelope queue %q, BrokerDeath %+v", h, env.Queue, d)
		}
	}
	// Past EnvelopeScanMax the lookups read it: the same envelope.
	wide := amqp.Table{wire.HeaderID: "id-1", wire.HeaderAttempt: int64(4), wire.HeaderFirstSeen: "2026-12-03T06:00:00.123Z",
		headerLastDeathQueue: "orders", headerLastDeathReason: "delivery_limit"}
	narrow := maps.Clone(wide)
	for i := range EnvelopeScanMax {
		wide[fmt.Sprintf("app-%d", i)] = i
	}
	if a, b := EnvelopeOf(narrow, "m", "c", "t", "ct"), EnvelopeOf(wide, "m", "c", "t", "ct"); a != b {
		t.Errorf("%d headers: %+v; %d: %+v", len(narrow), a, len(wide), b)
	} else if a.ID != "id-1" || a.Attempt != 4 || a.Queue != "orders" || a.Error != "dead-lettered by the broker: delivery_limit" || a.FirstSeen.IsZero() {
		t.Errorf("envelope %+v", a)
	}
}
