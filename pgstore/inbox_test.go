package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// newInbox migrates a schema of the test's own and adds a business table
// (payments: one row per effect), returning the pool and the inbox.
func newInbox(t *testing.T, opts ...pgstore.Option) (*pgxpool.Pool, *pgstore.Inbox) {
	t.Helper()
	pool, _ := pgtest.Schema(t, "inbox")
	ctx := context.Background()
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE payments (id text NOT NULL, n int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	in, err := pgstore.NewInbox(pool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return pool, in
}

// pay is a handler's effect: a row in payments, in the inbox's transaction.
func pay(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, `INSERT INTO payments (id, n) VALUES ($1, 1)`, id)
	return err
}

func count(t *testing.T, pool *pgxpool.Pool, q string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestProcessHandlesAnIDOnce(t *testing.T) {
	pool, in := newInbox(t)
	ctx := context.Background()
	calls := 0
	handle := func(ctx context.Context, tx pgx.Tx) runtime.Ack {
		calls++
		if got, ok := pgstore.Tx(ctx); !ok || got != tx {
			t.Errorf("Tx(ctx) = %v, %v; want the handler's transaction", got, ok)
		}
		if err := pay(ctx, tx, "P-1"); err != nil {
			return runtime.Retry(err)
		}
		return runtime.Accept()
	}
	for i := 0; i < 3; i++ {
		if ack := in.Process(ctx, "payments", "id-1", handle); ack.Kind() != runtime.AckAccept {
			t.Fatalf("delivery %d: %v; want Accept", i+1, ack)
		}
	}
	if calls != 1 {
		t.Errorf("handler called %d times for one id; want 1", calls)
	}
	if n := count(t, pool, `SELECT count(*) FROM payments`); n != 1 {
		t.Errorf("payments: %d rows; want 1", n)
	}
	if s := in.Stats(); s.Handled != 1 || s.Duplicates != 2 {
		t.Errorf("Stats = %+v; want Handled 1, Duplicates 2", s)
	}
	// Another consumer's inbox is its own.
	in.Process(ctx, "refunds", "id-1", handle)
	if calls != 2 {
		t.Errorf("consumer refunds, same id: handler calls %d; want 2", calls)
	}
}

// Retry, Reject, Park and a panic roll back: the effect and the inbox row
// are gone, and the next delivery of the id runs the handler again.
func TestProcessRollsBackAnythingButAccept(t *testing.T) {
	pool, in := newInbox(t)
	ctx := context.Background()
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		ack  runtime.Ack
	}{{"retry", runtime.Retry(boom)}, {"reject", runtime.Reject(boom)}, {"park", runtime.Park(boom)}, {"panic", runtime.Ack{}}} {
		id := "id-" + c.name
		func() {
			defer func() {
				if r := recover(); (r != nil) != (c.name == "panic") {
					t.Errorf("%s: recover() = %v", c.name, r)
				}
			}()
			ack := in.Process(ctx, "payments", id, func(ctx context.Context, tx pgx.Tx) runtime.Ack {
				if err := pay(ctx, tx, id); err != nil {
					t.Fatal(err)
				}
				if c.name == "panic" {
					panic("handler panicked")
				}
				return c.ack
			})
			if ack.Kind() != c.ack.Kind() || !errors.Is(ack.Err(), boom) {
				t.Errorf("%s: Process = %v; want the handler's %v", c.name, ack, c.ack)
			}
		}()
		if n := count(t, pool, `SELECT count(*) FROM payments WHERE id = $1`, id); n != 0 {
			t.Errorf("%s: %d payments rows after the rollback; want 0", c.name, n)
		}
		if n := count(t, pool, `SELECT count(*) FROM acemq_inbox WHERE message_id = $1`, id); n != 0 {
			t.Errorf("%s: %d inbox rows after the rollback; want 0", c.name, n)
		}
		calls := 0
		in.Process(ctx, "payments", id, func(ctx context.Context, tx pgx.Tx) runtime.Ack { calls++; return runtime.Accept() })
		if calls != 1 {
			t.Errorf("%s: the next delivery called the handler %d times; want 1", c.name, calls)
		}
	}
}

func TestProcessParksAMessageWithoutID(t *testing.T) {
	_, in := newInbox(t)
	ack := in.Process(context.Background(), "payments", "", func(context.Context, pgx.Tx) runtime.Ack {
		t.Error("handler called for a message without an id")
		return runtime.Accept()
	})
	if ack.Kind() != runtime.AckPark || !errors.Is(ack.Err(), pgstore.ErrNoMessageID) {
		t.Fatalf("Process(no id) = %v; want Park(ErrNoMessageID)", ack)
	}
	if !strings.Contains(ack.Err().Error(), "no x-acemq-id") {
		t.Errorf("reason %q does not name x-acemq-id", ack.Err())
	}
}

func TestProcessCommitFailureIsRetry(t *testing.T) {
	pool, in := newInbox(t)
	ack := in.Process(context.Background(), "payments", "id-c", func(ctx context.Context, tx pgx.Tx) runtime.Ack {
		// The handler breaks the rule and ends the transaction itself.
		_ = tx.Rollback(ctx)
		return runtime.Accept()
	})
	if ack.Kind() != runtime.AckRetry || !strings.Contains(ack.Err().Error(), "inbox: commit") {
		t.Fatalf("Process = %v; want Retry naming the commit", ack)
	}
	if n := count(t, pool, `SELECT count(*) FROM acemq_inbox`); n != 0 {
		t.Errorf("inbox rows %d; want 0", n)
	}
}

// Two deliveries of one id at once: the second waits on the first's
// uncommitted row and never runs the handler while the first does; once
// the first commits it is a duplicate, once the first rolls back it runs.
func TestConcurrentDeliveriesOfOneIDDoNotBothRun(t *testing.T) {
	for _, first := range []runtime.Ack{runtime.Accept(), runtime.Retry(errors.New("first failed"))} {
		t.Run(first.Kind().String(), func(t *testing.T) {
			pool, in := newInbox(t)
			ctx := context.Background()
			var running, calls atomic.Int32
			release := make(chan struct{})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free) // a failed test frees the first handler before the pool closes
			handle := func(ctx context.Context, tx pgx.Tx) runtime.Ack {
				if running.Add(1) != 1 {
					t.Error("two handlers of one id ran at once")
				}
				defer running.Add(-1)
				n := calls.Add(1)
				_ = pay(ctx, tx, "P-x")
				if n == 1 {
					<-release
					return first
				}
				return runtime.Accept()
			}
			done1, done2 := make(chan runtime.Ack, 1), make(chan runtime.Ack, 1)
			go func() { done1 <- in.Process(ctx, "payments", "id-x", handle) }()
			waitFor(t, "the first handler to start", func() bool { return calls.Load() == 1 })
			go func() { done2 <- in.Process(ctx, "payments", "id-x", handle) }()
			// The second delivery's insert waits on the first's row lock.
			waitFor(t, "the second delivery to wait on the row", func() bool {
				return count(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
					pool.Config().ConnConfig.RuntimeParams["application_name"]) == 1
			})
			if calls.Load() != 1 {
				t.Fatalf("the second delivery ran its handler while the first ran")
			}
			free()
			ack1, ack2 := <-done1, <-done2
			if ack1.Kind() != first.Kind() || ack2.Kind() != runtime.AckAccept {
				t.Errorf("acks %v, %v; want %v, Accept", ack1, ack2, first)
			}
			wantCalls := map[runtime.AckKind]int32{runtime.AckAccept: 1, runtime.AckRetry: 2}[first.Kind()]
			if calls.Load() != wantCalls {
				t.Errorf("handler calls %d; want %d", calls.Load(), wantCalls)
			}
			if n := count(t, pool, `SELECT count(*) FROM payments`); n != 1 {
				t.Errorf("payments rows %d; want 1", n)
			}
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
