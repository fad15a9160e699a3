package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultCleanupBatch is how many inbox rows one cleanup transaction
// deletes at most.
const DefaultCleanupBatch = 1000

// CleanupResult is what one Cleanup pass did.
type CleanupResult struct {
	Rows    int64         // rows deleted
	Batches int           // transactions that deleted rows
	Longest time.Duration // the longest batch's transaction, begin to commit: no row lock it took was held longer
}

// Cleanup deletes the inbox rows past their retention, batch rows at a
// time (DefaultCleanupBatch when batch ≤ 0), each batch its own short
// transaction, until none is left or ctx ends. A batch takes the oldest
// expired rows with FOR UPDATE SKIP LOCKED: it never waits on a row a
// handler's transaction holds, and it locks only the rows it deletes (a
// consumer's insert of another id never waits on it).
func (in *Inbox) Cleanup(ctx context.Context, batch int) (CleanupResult, error) {
	if batch <= 0 {
		batch = DefaultCleanupBatch
	}
	var res CleanupResult
	for ctx.Err() == nil {
		n, took, err := in.cleanBatch(ctx, batch)
		if err != nil {
			return res, err
		}
		if n == 0 {
			return res, nil
		}
		res.Rows += n
		res.Batches++
		res.Longest = max(res.Longest, took)
		in.cleaned.Add(ctx, n)
	}
	return res, ctx.Err()
}

func (in *Inbox) cleanBatch(ctx context.Context, batch int) (int64, time.Duration, error) {
	start := time.Now()
	tx, err := in.db.Begin(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("pgstore: inbox cleanup: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	tag, err := tx.Exec(ctx, "DELETE FROM "+in.table+" WHERE ctid = ANY(ARRAY("+
		"SELECT ctid FROM "+in.table+" WHERE expires_at < now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))", batch)
	if err != nil {
		return 0, 0, fmt.Errorf("pgstore: inbox cleanup: delete from %s: %w", in.table, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, 0, fmt.Errorf("pgstore: inbox cleanup: commit: %w", err)
	}
	return tag.RowsAffected(), time.Since(start), nil
}

// RunCleanup runs Cleanup every interval (and once at once) until ctx
// ends, logging a pass that failed; it returns ctx's error. Run it in one
// goroutine per process (several processes may: a batch skips the rows
// another's batch holds).
func (in *Inbox) RunCleanup(ctx context.Context, every time.Duration, batch int) error {
	if err := positive("RunCleanup's interval", every); err != nil {
		return err
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		res, err := in.Cleanup(ctx, batch)
		if err != nil && !errors.Is(err, ctx.Err()) {
			in.log.WarnContext(ctx, "acemq: inbox cleanup failed; trying again at the next interval", "err", err, "deleted", res.Rows)
		} else if res.Rows > 0 {
			in.log.DebugContext(ctx, "acemq: inbox cleanup", "deleted", res.Rows, "batches", res.Batches, "longest", res.Longest)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
