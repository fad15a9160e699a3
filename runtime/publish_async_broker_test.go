package runtime_test

// PublishAsync against the broker: a window of pending confirms, a return
// reported as the synchronous Publish reports it, a cancelled context, and
// the connection dropped under pending confirms.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// waitAll waits for every pending and returns their outcomes in order.
func waitAll(t *testing.T, ps []*runtime.Pending) []error {
	t.Helper()
	errs := make([]error, len(ps))
	ctx := ctxFor(t, wait)
	for i, p := range ps {
		errs[i] = p.Wait(ctx)
	}
	return errs
}

func TestPublishAsyncWindow(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "async")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, 30*time.Second)
	const n, window = 1000, 256
	bodies := make([]string, n)
	var pending []*runtime.Pending
	for i := range n {
		bodies[i] = fmt.Sprintf("async-%04d", i)
		if len(pending) == window {
			if err := pending[0].Wait(ctx); err != nil {
				t.Fatalf("confirm of message %d: %v", i-window, err)
			}
			pending = pending[1:]
		}
		p, err := runtime.PublishAsync(ctx, c, textType, "", bodies[i], runtime.WithRoutingKey(q))
		if err != nil {
			t.Fatalf("PublishAsync %d: %v", i, err)
		}
		pending = append(pending, p)
	}
	for i, err := range waitAll(t, pending) {
		if err != nil {
			t.Fatalf("confirm of message %d: %v", n-len(pending)+i, err)
		}
	}
	for _, p := range pending {
		select {
		case <-p.Done():
		default:
			t.Fatal("Wait returned nil but Done is not closed")
		}
	}
	// Every confirm arrived: all the messages are on the queue, once each.
	if got := depth(t, q); got != n {
		t.Errorf("after %d confirmed async publishes %s holds %d", n, q, got)
	}
	checkAll(t, drain(t, q, n, wait), bodies)
}

// A return reaches the pending confirm of the message it returns, with the
// error the synchronous Publish gives, and not the routable ones around it.
func TestPublishAsyncUnroutable(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "asyncret")
	rawQueue(t, q, nil)
	ex := rawExchange(t, "direct")
	if err := rawChannel(t).QueueBind(q, "here", ex, false, nil); err != nil {
		t.Fatal(err)
	}
	c := dial(t)
	ctx := ctxFor(t, 20*time.Second)
	syncErr := runtime.Publish(ctx, c, textType, ex, "sync", runtime.WithRoutingKey("nowhere"))
	if !errors.Is(syncErr, runtime.ErrUnroutable) {
		t.Fatalf("sync Publish to an unbound key = %v, want ErrUnroutable", syncErr)
	}
	var ps []*runtime.Pending
	keys := []string{"here", "nowhere", "here", "here", "nowhere", "here"}
	for i, key := range keys {
		p, err := runtime.PublishAsync(ctx, c, textType, ex, fmt.Sprintf("m%d", i), runtime.WithRoutingKey(key))
		if err != nil {
			t.Fatalf("PublishAsync %d: %v", i, err)
		}
		ps = append(ps, p)
	}
	for i, err := range waitAll(t, ps) {
		if keys[i] == "here" {
			if err != nil {
				t.Errorf("message %d (routable) = %v, want nil", i, err)
			}
			continue
		}
		if !errors.Is(err, runtime.ErrUnroutable) {
			t.Errorf("message %d (unroutable) = %v, want ErrUnroutable", i, err)
			continue
		}
		if err.Error() != syncErr.Error() {
			t.Errorf("async error %q, sync error %q: want the same", err, syncErr)
		}
		var pe *runtime.PublishError
		if !errors.As(err, &pe) || pe.Exchange != ex || pe.RoutingKey != "nowhere" {
			t.Errorf("error %v: want a *PublishError naming exchange %s and key nowhere", err, ex)
		}
	}
	if got := depth(t, q); got != 4 {
		t.Errorf("%s holds %d, want the 4 routable messages", q, got)
	}
}

func TestPublishAsyncContext(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "asyncctx")
	rawQueue(t, q, nil)
	c := dial(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	// A context already cancelled: nothing is written.
	p, err := runtime.PublishAsync(cancelled, c, textType, "", "never", runtime.WithRoutingKey(q))
	if !errors.Is(err, context.Canceled) || p != nil {
		t.Errorf("PublishAsync with a cancelled context = %v, %v; want nil and an error matching context.Canceled", p, err)
	}
	syncErr := runtime.Publish(cancelled, c, textType, "", "never", runtime.WithRoutingKey(q))
	if err.Error() != syncErr.Error() {
		t.Errorf("async error %q, sync error %q: want the same", err, syncErr)
	}
	// A Wait whose context ends first says so; the message stays pending
	// and its confirm is seen by a later Wait.
	ctx := ctxFor(t, 10*time.Second)
	p, err = runtime.PublishAsync(ctx, c, textType, "", "kept", runtime.WithRoutingKey(q))
	if err != nil {
		t.Fatalf("PublishAsync: %v", err)
	}
	if err := p.Wait(cancelled); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context = %v, want nil or an error matching context.Canceled", err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Errorf("Wait after a cancelled Wait = %v, want nil (confirmed)", err)
	}
	if got := string(getOne(t, q, wait).Body); got != "kept" {
		t.Errorf("body %q, want kept", got)
	}
	if got := depth(t, q); got != 0 {
		t.Errorf("%s holds %d more, want nothing (the cancelled publishes were not written)", q, got)
	}
}

// The broker drops the connection while confirms are pending: every
// pending is settled (none hangs), those that fail match ErrUnavailable,
// and every message whose confirm said yes is on the queue.
func TestPublishAsyncConnectionLost(t *testing.T) {
	t.Parallel()
	origin := brokertest.Name("asynclost")
	c := dial(t, runtime.WithOrigin(origin), runtime.WithReconnectBackoff(50*time.Millisecond, time.Second))
	q := brokertest.Queue(t, "asynclost")
	rawQueue(t, q, nil)
	ctx := ctxFor(t, 60*time.Second)
	publishText(t, c, q, "first") // the connection exists and is listed
	getOne(t, q, wait)

	type sent struct {
		body string
		p    *runtime.Pending
	}
	var (
		mu   sync.Mutex
		all  []sent
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := fmt.Sprintf("lost-%05d", i)
			p, err := runtime.PublishAsync(ctx, c, textType, "", body, runtime.WithRoutingKey(q))
			if err != nil {
				// Not written: the connection is down for now.
				time.Sleep(5 * time.Millisecond)
				continue
			}
			mu.Lock()
			all = append(all, sent{body, p})
			// A window of 256: wait for the oldest of the last 256.
			oldest := all[max(len(all)-256, 0)].p
			mu.Unlock()
			<-oldest.Done()
		}
	}()
	// A broker may flush every confirm it owes before it closes a
	// connection (RabbitMQ 4.0 did, now and then), and then no pending
	// fails: drop the connection again, up to five times, until one has.
	failedSoFar := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range all {
			select {
			case <-s.p.Done():
				if errors.Is(s.p.Wait(ctx), runtime.ErrUnavailable) {
					return true
				}
			default:
			}
		}
		return false
	}
	for range 5 {
		time.Sleep(150 * time.Millisecond)
		if n := brokertest.KillConnections(t, origin); n == 0 {
			t.Fatal("the broker listed no connection named", origin)
		}
		time.Sleep(150 * time.Millisecond)
		if failedSoFar() {
			break
		}
	}
	close(stop)
	<-done

	confirmed := map[string]bool{}
	failed := 0
	for _, s := range all {
		select {
		case <-s.p.Done():
		case <-time.After(wait):
			t.Fatalf("the pending confirm of %s was never settled", s.body)
		}
		err := s.p.Wait(ctx)
		switch {
		case err == nil:
			confirmed[s.body] = true
		case errors.Is(err, runtime.ErrUnavailable):
			failed++
		default:
			t.Errorf("%s: %v, want nil or an error matching ErrUnavailable", s.body, err)
		}
	}
	if failed == 0 {
		t.Errorf("none of %d pending confirms failed: the drop did not happen under pending confirms", len(all))
	}
	onQueue := map[string]bool{}
	for _, d := range drain(t, q, depth(t, q), wait) {
		onQueue[string(d.Body)] = true
	}
	for body := range confirmed {
		if !onQueue[body] {
			t.Errorf("%s was confirmed but is not on %s", body, q)
		}
	}
	t.Logf("%d published, %d confirmed, %d failed with the connection, %d on the queue", len(all), len(confirmed), failed, len(onQueue))
}
