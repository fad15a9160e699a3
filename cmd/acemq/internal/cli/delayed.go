package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	"github.com/spf13/cobra"
)

// delayedCommand is `acemq delayed`: how many messages wait in each level
// of the delay topology, and when the next is due.
func (e *env) delayedCommand() *cobra.Command {
	var prefix string
	var peek bool
	cmd := &cobra.Command{
		Use:   "delayed [--prefix acemq.delay] [--peek]",
		Short: "the delay topology: messages waiting at each level, and when the next is due",
		Long: `delayed counts the messages waiting in each of the delay topology's 28
levels (acemq.delay.00 … .27, runtime.WithDelay; docs/design.md, "Delayed
delivery"), level n holding a message 2^n seconds, and estimates when the
next one is due: a message in level n leaves it within 2^n s and has less
than 2^n s left then, so the lowest level that holds messages bounds it at
2^(n+1)−1 s from now.

With --peek, the first message of each level that holds any is read (and
given back unchanged, as acemq dlq peek does) for its x-acemq-delay-until:
the earliest of them is printed. Do not peek at quorum levels: each look
counts against a quorum queue's delivery limit.

Exit status: 0 done; 1 the topology is not declared under the prefix, or the
broker failed.`,
		Example: "  acemq delayed\n  acemq delayed --peek\n  acemq delayed --prefix billing.delay",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := wire.CheckDelayPrefix(prefix); err != nil {
				return bad("--prefix: %v", err)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			c, err := e.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close(context.Background())
			return e.delayed(ctx, c, prefix, peek)
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", wire.DelayPrefix, "the delay topology's prefix (Topology.DelayPrefix)")
	cmd.Flags().BoolVar(&peek, "peek", false, "read each level's first message for its due time (classic levels only)")
	return cmd
}

// delayed prints the levels' counts and the estimate.
func (e *env) delayed(ctx context.Context, c *runtime.Connection, prefix string, peek bool) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "level\tqueue\tholds\tmessages")
	total, lowest := 0, -1
	var earliest time.Time
	for n := wire.DelayLevels - 1; n >= 0; n-- {
		q := wire.DelayLevel(prefix, n)
		count, err := c.MessageCount(ctx, q)
		if err != nil {
			tw.Flush()
			return failed(fmt.Errorf("level %d: %w (is the delay topology declared under the prefix %s?)", n, err, prefix))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\n", n, q, time.Duration(wire.DelayLevelTTL(n))*time.Millisecond, count)
		total += count
		if count == 0 {
			continue
		}
		lowest = n
		if peek {
			_, err := c.Browse(ctx, q, 1, func(d *runtime.Delivery) error {
				if s, ok := d.Headers[wire.HeaderDelayUntil].(string); ok {
					if t, err := time.Parse(time.RFC3339Nano, s); err == nil && (earliest.IsZero() || t.Before(earliest)) {
						earliest = t
					}
				}
				return nil
			})
			if err != nil {
				tw.Flush()
				return failed(fmt.Errorf("peek at %s: %w", q, err))
			}
		}
	}
	tw.Flush()
	switch {
	case total == 0:
		fmt.Fprintf(e.stdout, "no message waits in %s\n", prefix)
	default:
		bound := time.Duration(int64(2)<<lowest-1) * time.Second
		fmt.Fprintf(e.stdout, "%d messages wait; the next is due within %s (level %d holds messages)\n", total, bound, lowest)
		if !earliest.IsZero() {
			fmt.Fprintf(e.stdout, "the earliest due of the levels' first messages: %s (in %s)\n", earliest.UTC().Format(time.RFC3339), time.Until(earliest).Round(time.Second))
		}
	}
	return nil
}
