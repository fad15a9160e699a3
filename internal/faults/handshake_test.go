//go:build faults

package faults

// An endpoint that accepts connections and resets them during the AMQP
// handshake (issue 36, item 10): a load balancer with no broker behind it,
// a broker starting up. One fault line:
//
//	fault=handshake-reset published=N confirmed=N handled=N dlq=N parked=N lost=N duplicated=N recover_ms=N

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// Every connection through the proxy is cut three times, and for 1.5s
// after each cut the proxy resets every new connection. The consumer and
// the publisher reconnect once it forwards again, publishes in the window
// fail with ErrUnavailable, so do requests (or they reach their ctx), and
// a Dial in the window keeps trying until its ctx, never failing at once.
func TestFaultHandshakeReset(t *testing.T) {
	const (
		name   = "handshake-reset"
		n      = 2000
		window = 1500 * time.Millisecond
	)
	q := queue(t, name, nil)
	rq := queue(t, name+"-requests", nil)
	leakCheck(t)
	px, err := NewProxy(fmt.Sprintf("127.0.0.1:%d", AMQPPort))
	if err != nil {
		t.Fatal(err)
	}
	u := "amqp://guest:guest@" + px.Addr() + "/"
	backoff := runtime.WithReconnectBackoff(50*time.Millisecond, 400*time.Millisecond)
	c := dialQuiet(t, u, runtime.WithHeartbeat(time.Second), backoff)
	pub := dialQuiet(t, u, runtime.WithHeartbeat(time.Second), backoff)
	caller := dialQuiet(t, u, runtime.WithHeartbeat(time.Second), backoff)
	serveQuotes(t, dial(t), rq, func(_ context.Context, m *runtime.Message[string]) (string, error) {
		return "quote for " + m.Payload, nil
	})
	r := runtime.NewRequester(caller)
	p := newProbe(t, name, q)
	cs := p.consumer(c, false, probePolicy, 4, 20)

	// Requests all along: each gets its reply, or fails with
	// ErrUnavailable, or reaches its ctx.
	stop := make(chan struct{})
	var (
		reqWG                       sync.WaitGroup
		replied, unavailable, atCtx atomic.Int64
	)
	reqWG.Add(1)
	go func() {
		defer reqWG.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			body := fmt.Sprintf("R-%d", i)
			reply, err := runtime.Request(ctx, r, quoteReq, text, "", body, runtime.WithRoutingKey(rq))
			cancel()
			switch {
			case err == nil && reply == "quote for "+body:
				replied.Add(1)
			case err == nil:
				t.Errorf("request %s: reply %q", body, reply)
			case errors.Is(err, runtime.ErrUnavailable):
				unavailable.Add(1)
			case errors.Is(err, context.DeadlineExceeded):
				atCtx.Add(1)
			default:
				t.Errorf("request %s: %v (want a reply, ErrUnavailable or ctx's error)", body, err)
			}
		}
	}()

	done := make(chan struct{})
	var dialTook []time.Duration
	go func() {
		defer close(done)
		for range 3 {
			time.Sleep(2 * time.Second)
			at := time.Now()
			if px.ResetFor(window) == 0 {
				t.Errorf("%s: no connection through the proxy", name)
			}
			// A Dial in the window: retried until its ctx, not failed at once.
			ctx, cancel := context.WithTimeout(context.Background(), window-300*time.Millisecond)
			start := time.Now()
			dc, err := runtime.Dial(ctx, u, runtime.WithLogger(quietLogger()), backoff)
			cancel()
			dialTook = append(dialTook, time.Since(start))
			if err == nil {
				_ = dc.Close(ctxFor(t, 5*time.Second))
				t.Errorf("%s: Dial in the reset window succeeded", name)
			} else if !errors.Is(err, runtime.ErrUnreachable) || !errors.Is(err, runtime.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: Dial in the reset window: %v; want ErrUnreachable, ErrUnavailable and DeadlineExceeded", name, err)
			}
			p.markRecovery(at, 20*time.Second)
		}
	}()
	p.publish(pub, 0, n, 4, 4*time.Millisecond, time.Now().Add(2*time.Minute))
	<-done
	close(stop)
	reqWG.Wait()
	p.settle(60*time.Second, nil)
	tl := p.report(nil, 3*dupBound(20, 4))
	fmt.Printf("  %s: resets=%d requests replied=%d unavailable=%d at_ctx=%d dial_in_window_ms=%v\n",
		name, px.Resets(), replied.Load(), unavailable.Load(), atCtx.Load(), millis(dialTook))
	if px.Resets() == 0 {
		t.Errorf("%s: the proxy reset no connection", name)
	}
	for _, d := range dialTook {
		if d < window-600*time.Millisecond {
			t.Errorf("%s: a Dial in the reset window returned after %s, before its ctx", name, d)
		}
	}
	if replied.Load() == 0 {
		t.Errorf("%s: no request got its reply", name)
	}
	if time.Duration(tl.recoverMS)*time.Millisecond > 5*time.Second {
		t.Errorf("%s: recovery took %dms, want within 5s", name, tl.recoverMS)
	}
	closeRequester(t, r)
	closeAll(t, cs, c, pub, caller)
	px.Close()
}

func millis(ds []time.Duration) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Milliseconds()
	}
	return out
}
