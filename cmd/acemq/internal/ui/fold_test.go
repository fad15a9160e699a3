package ui

import "testing"

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"gave up after 5 attempts: order A-17 not found":                 "gave up after # attempts: order # not found",
		"gave up after 4 attempts: order B-3 not found":                  "gave up after # attempts: order # not found",
		`rejected by the handler: customer "acme corp" unknown`:          `rejected by the handler: customer "…" unknown`,
		"rejected by the handler: can't reach 'warehouse-2' (timeout)":   `rejected by the handler: can't reach "…" (timeout)`,
		"could not be decoded: no handler for type \"x\"":                `could not be decoded: no handler for type "…"`,
		"gave up after 3 attempts (older than 10m0s): id 9f86d081-884c.": "gave up after # attempts (older than #): id #.",
		"dead-lettered by the broker: expired":                           "dead-lettered by the broker: expired",
		"":                                                               "",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}
