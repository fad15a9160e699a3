package where

import (
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

func TestMatch(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	m := Message{
		Envelope: runtime.Envelope{ID: "a2057f5d", Type: "order.placed.v2", Attempt: 4,
			Error: "gave up after 4 attempts: the warehouse is not answering", FirstSeen: now.Add(-30 * time.Minute)},
		Headers: map[string]any{"tenant": "acme", "x-acemq-queue": "orders.new", "n": int32(7)},
	}
	for expr, want := range map[string]bool{
		"error~warehouse": true, "error~customer": false, "error!~customer": true,
		"type=order.placed.v2": true, "type!=order.placed.v2": false, "id=a2057f5d": true,
		"attempt>=3": true, "attempt>4": false, "attempt=4": true, "attempt<2": false,
		"age<1h": true, "age>1h": false, "age>=30m": true,
		"first-seen<2026-12-01T10:00:00Z": true, "first-seen<2026-12-01T09:00:00Z": false,
		"header.tenant=acme": true, "header.tenant=other": false, "header.n=7": true,
		"header.missing=x": false, "header.missing!=x": true, "queue=orders.new": true,
		"replay-count=0": true,
	} {
		e, err := ParseOne(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if got := e.Match(m, now); got != want {
			t.Errorf("%s on the message = %v, want %v", expr, got, want)
		}
	}
	f, err := Parse([]string{"error~warehouse", "attempt>=3", "header.tenant=other"})
	if err != nil || f.Match(m, now) {
		t.Errorf("ANDed: %v %v, want no match", f, err)
	}
}

func TestParseErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"colour=red":       `unknown field "colour"; the fields are error, type, id, queue, origin, correlation-id, content-type, attempt, replay-count, age, first-seen, header.<name>`,
		"warehouse":        "want FIELD OP VALUE",
		"attempt>=three":   "attempt wants a whole number",
		"age<soon":         "age wants a duration",
		"age=1h":           "age is compared with",
		"first-seen<today": "first-seen wants an RFC 3339 time",
		"error<x":          "error is text",
		"attempt~3":        "attempt is a number",
		"=x":               "want FIELD OP VALUE",
	} {
		_, err := ParseOne(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", expr, err, want)
		}
	}
}
