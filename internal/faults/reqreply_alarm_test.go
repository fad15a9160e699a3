//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// Under a memory alarm the broker stops reading the requester's socket
// while its writer writes a corked batch of requests (bench/NOTES.md,
// "RR1 at 64 in flight"): 64 requests of 256 KB in flight, more than the
// socket's buffers take. Each returns by its ctx (its deadline, or
// ErrBlocked at once once the broker said so), none later; once the alarm
// is cleared a request gets its reply; after Close no goroutine is left.
func TestRequestUnderMemoryAlarmReturnsAtItsCtx(t *testing.T) {
	leakCheck(t)
	q := queue(t, "rr-alarm", nil)
	serving := dial(t)
	cs := serveQuotes(t, serving, q, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		return fmt.Sprintf("quote for %d bytes", len(m.Payload)), nil
	})
	c := dial(t)
	r := runtime.NewRequester(c)
	if _, err := runtime.Request(ctxFor(t, 20*time.Second), r, quoteReq, text, "", "warm-up", runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("warm-up request: %v", err)
	}
	SetAlarm(t)
	big := strings.Repeat("x", 256<<10)
	const n = 64
	const timeout = 3 * time.Second
	type result struct {
		err  error
		took time.Duration
	}
	results := make(chan result, n)
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			_, err := runtime.Request(ctx, r, quoteReq, text, "", big, runtime.WithRoutingKey(q))
			results <- result{err, time.Since(start)}
		}()
	}
	var atCtx, blocked int
	var slowest time.Duration
	for i := range n {
		select {
		case res := <-results:
			switch {
			case errors.Is(res.err, context.DeadlineExceeded):
				atCtx++
			case errors.Is(res.err, runtime.ErrBlocked):
				blocked++
			default:
				t.Errorf("a request under the alarm: %v; want its ctx's deadline or ErrBlocked", res.err)
			}
			slowest = max(slowest, res.took)
		case <-time.After(timeout + 5*time.Second):
			t.Fatalf("%d of %d requests still wait %s past their ctx of %s", n-i, n, 5*time.Second, timeout)
		}
	}
	if slowest > timeout+time.Second {
		t.Errorf("the slowest request returned after %s; its ctx was %s", slowest, timeout)
	}
	t.Logf("fault=memory-alarm requests=%d at_ctx=%d blocked=%d slowest_ms=%d", n, atCtx, blocked, slowest.Milliseconds())
	if atCtx == 0 {
		t.Errorf("no request waited for its ctx: the broker refused every one at once, so no write was held (want some held behind the unread socket)")
	}
	ClearAlarm(t)
	got, err := runtime.Request(ctxFor(t, 30*time.Second), r, quoteReq, text, "", "A-1", runtime.WithRoutingKey(q))
	if err != nil || got != "quote for 3 bytes" {
		t.Fatalf("a request after the alarm: %q, %v; want its reply", got, err)
	}
	closeRequester(t, r)
	_ = cs.Close(ctxFor(t, 10*time.Second))
	if err := c.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := serving.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
}
