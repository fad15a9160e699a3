package pgstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// balance takes or frees shards so that this relay holds its share of
// them, ceil(Shards / relays running): the relays are the sessions holding
// the outbox's member lock (shared). A shard another relay holds is not
// taken; one freed by a relay that stopped is, at the next balance.
func (r *Relay) balance(ctx context.Context) error {
	r.balanced = time.Now()
	var members int
	err := r.conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = $1::oid AND objid = $2::oid
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
		r.table, uint32(Shards)).Scan(&members)
	if err != nil {
		return err
	}
	share := (Shards + max(members, 1) - 1) / max(members, 1)
	switch {
	case len(r.held) > share:
		return r.free(ctx, r.held[share:])
	case len(r.held) < share:
		return r.take(ctx, share-len(r.held))
	}
	return nil
}

// take locks up to n shards no relay holds.
func (r *Relay) take(ctx context.Context, n int) error {
	rows, err := r.conn.Query(ctx, `SELECT s FROM generate_series(0, $2::int - 1) AS s
WHERE NOT (s = ANY($3::int[])) AND pg_try_advisory_lock($1, s) LIMIT $4`, r.class(), int32(Shards), append([]int32{}, r.held...), n)
	if err != nil {
		return err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return err
	}
	if len(got) > 0 {
		r.held = append(r.held, got...)
		slices.Sort(r.held)
		r.cfg.logger.Debug("acemq: outbox relay took shards", "table", r.ob.name, "shards", shardList(got), "held", len(r.held))
	}
	return nil
}

// free unlocks the shards in some (the end of r.held); nothing of theirs
// is in flight between rounds, and the batch read ahead is dropped (it
// may hold their rows, which the relay that takes them will publish).
func (r *Relay) free(ctx context.Context, some []int32) error {
	r.ahead = nil
	some = slices.Clone(some)
	if _, err := r.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, s) FROM unnest($2::int[]) AS s`, r.class(), some); err != nil {
		return err
	}
	r.held = r.held[:len(r.held)-len(some)]
	r.cfg.logger.Debug("acemq: outbox relay freed shards", "table", r.ob.name, "shards", shardList(some), "held", len(r.held))
	return nil
}

func shardList(s []int32) string {
	b := make([]byte, 0, 3*len(s))
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(b)
}

// wait waits for a notification of a shard this relay holds, the next
// balance (a poll), or the retry time of a refused row, whichever comes
// first.
func (r *Relay) wait(ctx context.Context) error {
	until := r.balanced.Add(r.cfg.poll)
	if !r.nextRetry.IsZero() && r.nextRetry.Before(until) {
		until = r.nextRetry
	}
	for {
		wctx, cancel := context.WithDeadline(ctx, until)
		n, err := r.conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && !time.Now().Before(until):
			if !r.nextRetry.IsZero() && !time.Now().Before(r.nextRetry) {
				r.nextRetry = time.Time{}
			}
			return nil
		case err != nil:
			return err
		}
		if r.mine(n.Payload) {
			return nil
		}
	}
}

// mine reports whether a notification's payload, "<table oid>:<shard>",
// names this relay's table and one of its shards (an unreadable payload
// is taken as its own: a look costs one query).
func (r *Relay) mine(payload string) bool {
	oid, shard, ok := strings.Cut(payload, ":")
	o, err1 := strconv.ParseUint(oid, 10, 32)
	s, err2 := strconv.ParseInt(shard, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return true
	}
	return uint32(o) == r.table && slices.Contains(r.held, int32(s))
}
