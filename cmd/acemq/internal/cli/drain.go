package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/drain"
	"github.com/spf13/cobra"
)

// drainCommand is `acemq drain`: whether queues drain, through the
// management API (package runtime/drain).
func (e *env) drainCommand() *cobra.Command {
	var maxAge time.Duration
	var asJSON bool
	var file string
	cmd := &cobra.Command{
		Use:   "drain QUEUE... | drain -f acemq.yaml",
		Short: "whether queues drain: depth, consumers, publish/deliver/ack rates, oldest message, verdict",
		Long: `drain reads each queue through the management API (--mgmt-url) and says
whether it drains: its depth (ready and unacked), its consumers, the publish,
deliver and ack rates the management plugin sampled (msg/s, averaged over its
last samples, 5s apart by default), the age of its oldest message where the
broker gives it (classic queues; "-" otherwise), and the verdict with its
reason. An empty queue drains; messages with no consumer do not; consumers
that take and ack nothing do not; acks slower than publishes do not; with
--max-age, an oldest message older than that does not.

With -f, the manifest's queues (not their .dlq and .parked: alert on those
growing, not on draining).

Exit status: 0 every queue drains; 1 a queue does not drain or is not there
(every queue is still reported), or the management API failed; 2 bad input.
One check is a snapshot: page on 1 for several checks in a row.`,
		Example: "  acemq drain orders.new\n  acemq drain orders.new orders.paid --max-age 5m\n  acemq drain -f acemq.yaml --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			queues, err := drainQueues(file, args)
			if err != nil {
				return err
			}
			if maxAge < 0 {
				return bad("--max-age %s: want 0 (not used) or more", maxAge)
			}
			return e.drain(queues, drain.Options{MaxAge: maxAge}, asJSON)
		},
	}
	cmd.Flags().DurationVar(&maxAge, "max-age", 0, "not draining when the oldest message is older than this, whatever the rates (0: not used)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per queue (the report's every field)")
	cmd.Flags().StringVarP(&file, "file", "f", "", "check every queue of this manifest (acemq.yaml)")
	return cmd
}

// drainQueues are the queues named, or the manifest's.
func drainQueues(file string, args []string) ([]string, error) {
	switch {
	case file != "" && len(args) > 0:
		return nil, bad("acemq drain: name queues or give -f, not both")
	case file != "":
		m, err := topo.Load(file)
		if err != nil {
			return nil, &exitError{ExitBad, err}
		}
		var queues []string
		for _, q := range m.Queues {
			queues = append(queues, q.Name)
		}
		if len(queues) == 0 {
			return nil, bad("%s declares no queue", file)
		}
		return queues, nil
	case len(args) == 0:
		return nil, bad("acemq drain: want QUEUE... or -f acemq.yaml (see 'acemq drain --help')")
	}
	return args, nil
}

// drainRow is one queue's report as --json writes it: the report, or the
// queue and why there is none.
type drainRow struct {
	drain.Report
	OldestAge string `json:"oldest_age,omitempty"`
	Error     string `json:"error,omitempty"`
}

func (e *env) drain(queues []string, opts drain.Options, asJSON bool) error {
	client, vhost, err := e.management()
	if err != nil {
		return err
	}
	ctx, cancel := signalContext()
	defer cancel()
	rows := make([]drainRow, 0, len(queues))
	var notDraining []string
	for _, q := range queues {
		cctx, done := context.WithTimeout(ctx, e.connect)
		r, err := drain.Check(cctx, client, vhost, q, opts)
		done()
		row := drainRow{Report: r}
		switch {
		case errors.Is(err, drain.ErrQueueNotFound):
			row.Error = "not found"
			notDraining = append(notDraining, q)
		case err != nil:
			return e.managementFailed(err)
		case !r.Draining:
			notDraining = append(notDraining, q)
		}
		if r.OldestKnown {
			row.OldestAge = age(r.OldestAge)
		}
		rows = append(rows, row)
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return failed(err)
			}
		}
	} else {
		e.drainTable(rows)
	}
	if len(notDraining) > 0 {
		word := "queues"
		if len(rows) == 1 {
			word = "queue"
		}
		return failed(fmt.Errorf("%d of %d %s not draining: %s", len(notDraining), len(rows), word, strings.Join(notDraining, ", ")))
	}
	return nil
}

func (e *env) drainTable(rows []drainRow) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tDEPTH\tREADY\tUNACKED\tCONSUMERS\tPUBLISH/S\tDELIVER/S\tACK/S\tOLDEST\tVERDICT")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n", r.Queue, r.Error)
			continue
		}
		verdict := "draining: " + r.Why
		if !r.Draining {
			verdict = "NOT DRAINING: " + r.Why
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%s\t%s\n", r.Queue, r.Depth, r.Ready, r.Unacked, r.Consumers,
			r.PublishRate, r.DeliverRate, r.AckRate, dash(r.OldestAge), verdict)
	}
	tw.Flush()
}
