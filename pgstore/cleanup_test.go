package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
)

// cleanupLockBound is the bound this test holds the cleanup to: no batch
// transaction of DefaultCleanupBatch rows (so no row lock it takes) lasts
// longer, on the shared 2-core test machine under load. docs/operations.md
// states it and the figures measured.
const cleanupLockBound = 2 * time.Second

// TestCleanupOf200000RowsIsBatchedWhileConsumersGoOn: 200,000 inbox rows
// past their retention are deleted in batches of 1000, each a transaction
// of its own no longer than cleanupLockBound, while four consumers go on
// handling new ids (each delivery no slower than the bound either); rows
// within their retention stay.
func TestCleanupOf200000RowsIsBatchedWhileConsumersGoOn(t *testing.T) {
	pool, in := newInbox(t)
	ctx := context.Background()
	const expired, kept = 200_000, 1_000
	if _, err := pool.Exec(ctx, `INSERT INTO acemq_inbox (consumer, message_id, received_at, expires_at)
		SELECT 'payments', 'old-' || i, now() - interval '8 days', now() - interval '1 day' - i * interval '1 ms' FROM generate_series(1, $1) i`, expired); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO acemq_inbox (consumer, message_id, expires_at)
		SELECT 'payments', 'recent-' || i, now() + interval '6 days' FROM generate_series(1, $1) i`, kept); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var handled atomic.Int64
	var slowest atomic.Int64 // ns
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				ack := in.Process(ctx, "payments", fmt.Sprintf("new-%d-%d", w, i), func(ctx context.Context, tx pgx.Tx) runtime.Ack {
					if err := pay(ctx, tx, "p"); err != nil {
						return runtime.Retry(err)
					}
					return runtime.Accept()
				})
				if ack.Kind() != runtime.AckAccept {
					t.Errorf("a consumer's delivery during the cleanup: %v", ack)
					return
				}
				handled.Add(1)
				for d := int64(time.Since(start)); ; {
					if old := slowest.Load(); d <= old || slowest.CompareAndSwap(old, d) {
						break
					}
				}
			}
		}()
	}
	before := handled.Load()
	res, err := in.Cleanup(ctx, 0)
	during := handled.Load() - before
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cleanup: %d rows in %d batches, longest batch %v; consumers handled %d meanwhile, slowest delivery %v",
		res.Rows, res.Batches, res.Longest, during, time.Duration(slowest.Load()))
	if res.Rows != expired || res.Batches != expired/1000 {
		t.Errorf("Cleanup deleted %d rows in %d batches; want %d in %d", res.Rows, res.Batches, expired, expired/1000)
	}
	if res.Longest > cleanupLockBound {
		t.Errorf("the longest batch held its locks %v; the bound is %v", res.Longest, cleanupLockBound)
	}
	if during == 0 {
		t.Error("no consumer delivery was handled during the cleanup")
	}
	if s := time.Duration(slowest.Load()); s > cleanupLockBound {
		t.Errorf("the slowest consumer delivery during the cleanup took %v; the bound is %v", s, cleanupLockBound)
	}
	if n := count(t, pool, `SELECT count(*) FROM acemq_inbox WHERE message_id LIKE 'old-%'`); n != 0 {
		t.Errorf("%d expired rows left", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM acemq_inbox WHERE message_id LIKE 'recent-%'`); n != kept {
		t.Errorf("%d rows within their retention left; want %d", n, kept)
	}
}
