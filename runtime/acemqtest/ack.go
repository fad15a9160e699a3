package acemqtest

import (
	"context"
	"strings"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/core"
)

// Call runs h on m as a consumer does: a panic is a Retry whose error is a
// *runtime.PanicError (the value, the frame that raised it, the stack).
func Call[T any](ctx context.Context, h runtime.Handler[T], m *runtime.Message[T]) (a runtime.Ack) {
	defer func() {
		if r := recover(); r != nil {
			a = runtime.Retry(core.NewPanicError(r))
		}
	}()
	return h(ctx, m)
}

// AssertAccept fails the test unless a is Accept.
func AssertAccept(tb TB, a runtime.Ack) {
	tb.Helper()
	assertKind(tb, a, runtime.AckAccept, "")
}

// AssertRetry fails the test unless a is a Retry (not made a Reject by
// runtime.Fatal) whose reason contains reason ("" matches any).
func AssertRetry(tb TB, a runtime.Ack, reason string) {
	tb.Helper()
	assertKind(tb, a, runtime.AckRetry, reason)
}

// AssertReject fails the test unless a sends the message to the
// dead-letter queue at once — Reject, or a Retry of an error wrapped in
// runtime.Fatal — with a reason containing reason ("" matches any).
func AssertReject(tb TB, a runtime.Ack, reason string) {
	tb.Helper()
	assertKind(tb, a, runtime.AckReject, reason)
}

// AssertPark fails the test unless a is Park with a reason containing
// reason ("" matches any).
func AssertPark(tb TB, a runtime.Ack, reason string) {
	tb.Helper()
	assertKind(tb, a, runtime.AckPark, reason)
}

func assertKind(tb TB, a runtime.Ack, want runtime.AckKind, reason string) {
	tb.Helper()
	if got := a.Kind(); got != want {
		tb.Errorf("ack = %s, want %s", a, want)
		return
	}
	if reason == "" {
		return
	}
	got := ""
	if a.Err() != nil {
		got = a.Err().Error()
	}
	if !strings.Contains(got, reason) {
		tb.Errorf("ack = %s, want a reason containing %q", a, reason)
	}
}

// Reason is the text the runtime writes in x-acemq-error for a, when the
// outcome is settled at once: "rejected by the handler: …" for a Reject,
// "parked by the handler: …" for a Park, the plain reason for a Retry with
// attempts left (on the last attempt the runtime writes "gave up after N
// attempts: " before it), "" for Accept.
func Reason(a runtime.Ack) string {
	why := "no reason given"
	if a.Err() != nil {
		why = a.Err().Error()
	}
	switch a.Kind() {
	case runtime.AckReject:
		return "rejected by the handler: " + why
	case runtime.AckPark:
		return "parked by the handler: " + why
	case runtime.AckRetry:
		return why
	}
	return ""
}
