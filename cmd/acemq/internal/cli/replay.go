package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/cmd/acemq/internal/where"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	"github.com/spf13/cobra"
)

// replaySource is the queue a replay reads: q.dlq or q.parked as given,
// else the dead-letter queue of the queue named.
func replaySource(arg string) string {
	if _, kind, ok := wire.Owner(arg); ok && kind != wire.Rung {
		return arg
	}
	return wire.DeadLetterQueue(arg)
}

func (e *env) replayCommand() *cobra.Command {
	var (
		to, exchange string
		limit        int
		timeout      time.Duration
		keep, dry    bool
		follow       bool
		wheres       []string
		queues       []string
		file         string
	)
	cmd := &cobra.Command{
		Use:   "replay QUEUE",
		Short: "put dead letters (or parked messages) back where they came from",
		Long: `Replay moves the messages of QUEUE (orders.new.dlq, orders.new.parked; a
plain name means its .dlq) back: each to the queue it came from
(x-acemq-queue, or the queue the broker dead-lettered it from), or to --to.
Those headers are written by whoever published into QUEUE, so a message goes
back to the queue they name only when it is allowed: the queue QUEUE belongs
to (orders.new for orders.new.dlq or orders.new.parked), a --queue, or a
queue of the -f manifest. A message whose headers name another queue is
left on QUEUE and reported ("refused N", exit 1); --follow-headers sends
each where its headers say.
Each copy is published with a confirm before its original is acked. It goes
back on attempt 1 with its error cleared (--keep-attempts puts back exactly
what was there); its id, correlation id, first seen and body are kept; it is
stamped acemq-replayed-from, acemq-replayed-at and acemq-replay-count.

--where EXPR selects what moves; the rest stay where they are. EXPR is
FIELD OP VALUE, several --where are ANDed:
  error~warehouse          the reason contains "warehouse" (!~: does not)
  type=order.placed.v2     id=...   queue=orders.new   origin=...
  attempt>=3               replay-count=0   (= != < <= > >=)
  age<1h                   first seen less than an hour ago
  first-seen<2026-11-30T10:00:00Z   a cut-off: leave what fails during the pass
  header.tenant=acme       an application header

A message the pass moved that comes back (rejected again) is not moved twice.
The last line is the result: moved N, skipped M (drained|limit|deadline|cancelled).
Exit 0 when the pass ran, 1 when some messages could not be moved, 2 on bad
input.`,
		Example: `  acemq replay orders.new.dlq --where 'error~warehouse'
  acemq replay orders.new.dlq --to orders.new --limit 500 --timeout 5m
  acemq replay orders.new.dlq --where 'first-seen<2026-11-30T10:00:00Z' --dry-run`,
		Args: exactArgs(1, "QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := where.Parse(wheres)
			if err != nil {
				return bad("%w", err)
			}
			switch {
			case limit < 0:
				return bad("--limit %d: want 0 (no limit) or more", limit)
			case timeout < 0:
				return bad("--timeout %s: want a positive duration", timeout)
			case exchange != "" && to == "":
				// allowed: each message's own queue is the routing key
			}
			src := replaySource(args[0])
			if exchange == "" && to == src {
				return bad("replay %s --to %s: %w", src, to, runtime.ErrReplayLoop)
			}
			if file != "" {
				m, err := topo.Load(file)
				if err != nil {
					return &exitError{ExitBad, err}
				}
				for _, q := range m.Queues {
					queues = append(queues, q.Name)
				}
			}
			opts := runtime.ReplayOptions{RoutingKey: to, Exchange: exchange, Limit: limit, KeepAttempts: keep,
				Queues: queues, FollowHeaders: follow}
			if dry {
				return e.dryRun(src, opts, f)
			}
			return e.replay(src, opts, f, timeout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&to, "to", "", "send every message with this routing key (to the queue of that name without --exchange)")
	fl.StringVar(&exchange, "exchange", "", "publish through this exchange")
	fl.IntVar(&limit, "limit", 0, "move at most N messages (0: no limit)")
	fl.DurationVar(&timeout, "timeout", 0, "stop after this long (e.g. 5m; 0: no timeout)")
	fl.BoolVar(&keep, "keep-attempts", false, "keep the attempt count and the error as they are")
	fl.StringArrayVar(&wheres, "where", nil, "move only matching messages (repeatable, ANDed)")
	fl.BoolVar(&dry, "dry-run", false, "print what would move, move nothing")
	fl.StringArrayVar(&queues, "queue", nil, "allow sending back to this queue when a message's headers name it (repeatable; QUEUE's own is always allowed)")
	fl.StringVarP(&file, "file", "f", "", "allow sending back to every queue this manifest declares (acemq.yaml)")
	fl.BoolVar(&follow, "follow-headers", false, "send each message to whatever queue its headers name, allowed or not")
	return cmd
}

func targetText(opts runtime.ReplayOptions) string {
	switch {
	case opts.Exchange != "" && opts.RoutingKey != "":
		return fmt.Sprintf("exchange %s, routing key %s", opts.Exchange, opts.RoutingKey)
	case opts.Exchange != "":
		return fmt.Sprintf("exchange %s, each message's own queue as routing key", opts.Exchange)
	case opts.RoutingKey != "":
		return opts.RoutingKey
	}
	if opts.FollowHeaders {
		return "each message's own queue (whatever its headers name)"
	}
	return "each message's own queue"
}

// allowedText says which queues a pass sends to when the headers name
// the target: "" when --to names it or --follow-headers follows them.
func allowedText(src string, opts runtime.ReplayOptions) string {
	if opts.RoutingKey != "" || opts.FollowHeaders {
		return ""
	}
	var qs []string
	if q := replayOwner(src); q != "" {
		qs = append(qs, q)
	}
	for _, q := range opts.Queues {
		if !slices.Contains(qs, q) {
			qs = append(qs, q)
		}
	}
	if len(qs) == 0 {
		return "sending to no queue its headers name (give --to, --queue or -f)"
	}
	return "allowed: " + strings.Join(qs, ", ")
}

// allowed is Connection.Replay's rule for a target the headers name.
func allowed(src string, opts runtime.ReplayOptions, queue string) bool {
	return opts.FollowHeaders || queue == replayOwner(src) || slices.Contains(opts.Queues, queue)
}

// replayOwner is the queue a dead-letter or parked queue belongs to, the
// target Connection.Replay allows without being told: q for q.dlq or
// q.parked, "" for any other name (a rung included).
func replayOwner(src string) string {
	if q, kind, ok := wire.Owner(src); ok && kind != wire.Rung {
		return q
	}
	return ""
}

// replayCount is "1 message", "20001 messages", or with a limit below
// them "up to 10000 of 20001 messages".
func replayCount(total, limit int) string {
	if limit > 0 && limit < total {
		return fmt.Sprintf("up to %d of %d messages", limit, total)
	}
	if total == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", total)
}

// replay runs one pass; a timeout above 0 is the pass's deadline.
func (e *env) replay(src string, opts runtime.ReplayOptions, f where.Filter, timeout time.Duration) error {
	return e.withQueue(src, func(ctx context.Context, c *runtime.Connection, total int) error {
		fmt.Fprintf(e.stdout, "replaying %s from %s to %s\n", replayCount(total, opts.Limit), src, targetText(opts))
		if opts.Limit > 0 && opts.Limit < total {
			// Without a --where every message looked at is moved: the
			// bar ends at the limit (it grows past it when one matches
			// fewer).
			total = opts.Limit
		}
		if a := allowedText(src, opts); a != "" {
			fmt.Fprintf(e.stdout, "  %s\n", a)
		}
		var b *bar
		if e.outTTY {
			b = e.progress(true, total, "replay")
			if b.pb != nil {
				b.pb.ChangeMax(total)
			}
		} else {
			b = lines(e.stdout, total, "looked at")
		}
		looked := 0
		now := time.Now()
		opts.Filter = func(env runtime.Envelope, h map[string]any, body []byte) bool {
			looked++
			b.step(looked)
			return f.Match(where.Message{Envelope: env, Headers: h, Body: body}, now)
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		res, err := c.Replay(ctx, src, opts)
		b.done()
		if err != nil {
			fmt.Fprintln(e.stdout, res)
			return failed(err)
		}
		for _, fl := range res.Failures {
			fmt.Fprintf(e.stderr, "acemq: left on %s: %v\n", src, fl)
		}
		fmt.Fprintln(e.stdout, res)
		if left := res.Failed + res.Refused; left > 0 {
			if left == 1 {
				return &exitError{ExitFail, fmt.Errorf("1 message could not be moved; it is still on %s", src)}
			}
			return &exitError{ExitFail, fmt.Errorf("%d messages could not be moved; they are still on %s", left, src)}
		}
		return nil
	})
}

// dryRun reads src without consuming it and prints what a pass would do.
func (e *env) dryRun(src string, opts runtime.ReplayOptions, f where.Filter) error {
	ctx, cancel := signalContext()
	defer cancel()
	c, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if _, err := c.MessageCount(ctx, src); err != nil {
		return failed(err)
	}
	now := time.Now()
	var move, skip, fail, refuse int
	_, err = c.Browse(ctx, src, 0, func(d *runtime.Delivery) error {
		id := dash(d.Envelope.ID)
		if !f.Match(whereMessage(d), now) {
			skip++
			fmt.Fprintf(e.stdout, "skip %s (%s): %s\n", id, dash(d.Envelope.Type), dash(Reason(d)))
			return nil
		}
		if opts.Limit > 0 && move >= opts.Limit {
			return errStop
		}
		target := opts.RoutingKey
		if target == "" {
			target = runtime.OwnQueue(d.Headers)
			if target != "" && (opts.Exchange != "" || target != src) && !allowed(src, opts, target) {
				refuse++
				fmt.Fprintf(e.stdout, "refuse %s (%s): its headers name queue %s, not allowed (give --queue %s or --follow-headers)\n", id, dash(d.Envelope.Type), target, target)
				return nil
			}
		}
		if opts.Exchange != "" {
			target = opts.Exchange + "/" + target
		}
		switch {
		case target == "" || target == opts.Exchange+"/":
			fail++
			fmt.Fprintf(e.stdout, "fail %s (%s): no queue to go back to; give --to\n", id, dash(d.Envelope.Type))
		case target == src:
			fail++
			fmt.Fprintf(e.stdout, "fail %s (%s): its own queue is %s itself\n", id, dash(d.Envelope.Type), src)
		default:
			move++
			fmt.Fprintf(e.stdout, "move %s (%s) to %s: %s\n", id, dash(d.Envelope.Type), target, dash(Reason(d)))
		}
		return nil
	})
	if err != nil && err != errStop {
		return failed(err)
	}
	if refuse > 0 {
		fmt.Fprintf(e.stdout, "dry run: would move %d, skip %d, refuse %d, fail %d; nothing moved\n", move, skip, refuse, fail)
		return nil
	}
	fmt.Fprintf(e.stdout, "dry run: would move %d, skip %d, fail %d; nothing moved\n", move, skip, fail)
	return nil
}

var errStop = fmt.Errorf("stop")
