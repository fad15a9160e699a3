package cli

import (
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/runtime"
	"github.com/spf13/cobra"
)

func (e *env) topologyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topology",
		Short: "compare a manifest's topology with the live broker, or declare what is missing",
		Long: `topology diff lists what acemq.yaml declares that the broker does not have, or
has with other arguments (queue type, x-message-ttl, dead-letter arguments):
RabbitMQ will not change an existing queue, so a deploy that needs another
argument fails at declare time. Run it before the deploy. It also lists what
the broker has beyond the manifest under its names ("extra"): queues under
its queues' prefixes (orders. for orders.new) that it does not declare, and
bindings of its queues and exchanges that it does not declare, so a rename
leaves no forgotten queue (--extra=false leaves them out). It reads through
the management API (--mgmt-url). topology apply declares what is missing and
refuses, naming the queue and the argument, when something exists with other
arguments; it never deletes.`,
		Example: "  acemq topology diff -f acemq.yaml\n  acemq topology apply -f acemq.yaml",
	}
	var file string
	var extra bool
	diff := &cobra.Command{
		Use:     "diff -f acemq.yaml",
		Short:   "what differs between the manifest and the broker; exit 1 with one line per difference",
		Example: "  acemq topology diff -f acemq.yaml\n  acemq topology diff -f acemq.yaml --mgmt-url http://rabbit:15672",
		Args:    exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, args []string) error {
			diffs, t, err := e.diff(file, extra)
			if err != nil {
				return err
			}
			if len(diffs) == 0 {
				fmt.Fprintf(e.stdout, "the broker matches %s (%s)\n", file, topo.Summary(t))
				return nil
			}
			fmt.Fprint(e.stdout, topo.Lines(diffs))
			word := "differences"
			if len(diffs) == 1 {
				word = "difference"
			}
			extras := 0
			for _, d := range diffs {
				if d.Extra {
					extras++
				}
			}
			why := ""
			if extras > 0 {
				why = fmt.Sprintf(" (%d extra: on the broker, not in the manifest; apply never deletes, delete them once they are drained, or --extra=false)", extras)
			}
			return &exitError{ExitFail, fmt.Errorf("%d %s between %s and the broker%s", len(diffs), word, file, why)}
		},
	}
	diff.Flags().StringVarP(&file, "file", "f", "", "the manifest (acemq.yaml)")
	diff.Flags().BoolVar(&extra, "extra", true, "also list queues and bindings under the manifest's names that it does not declare")
	var applyFile string
	apply := &cobra.Command{
		Use:     "apply -f acemq.yaml",
		Short:   "declare what the manifest has and the broker lacks; never changes or deletes",
		Example: "  acemq topology apply -f acemq.yaml",
		Args:    exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, args []string) error {
			diffs, t, err := e.diff(applyFile, false)
			if err != nil {
				return err
			}
			if conflicts := topo.Conflicts(diffs); len(conflicts) > 0 {
				for _, d := range conflicts {
					fmt.Fprintf(e.stderr, "acemq: refusing: %s\n", d)
				}
				return &exitError{ExitFail, fmt.Errorf("nothing declared: %d things exist with other arguments, and RabbitMQ does not change an existing queue or exchange (delete it and its messages, or change the manifest)", len(conflicts))}
			}
			if len(diffs) == 0 {
				fmt.Fprintf(e.stdout, "nothing to declare: the broker matches %s\n", applyFile)
				return nil
			}
			ctx, cancel := signalContext()
			defer cancel()
			c, err := e.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			if err := c.Declare(ctx, t); err != nil {
				return failed(err)
			}
			rest, delay := topo.SplitDelay(diffs)
			for _, l := range topo.DelayLines(delay) {
				fmt.Fprintf(e.stdout, "declared %s\n", strings.TrimPrefix(l, "missing "))
			}
			for _, d := range rest {
				fmt.Fprintf(e.stdout, "declared %s\n", d.String()[len("missing "):])
			}
			return nil
		},
	}
	apply.Flags().StringVarP(&applyFile, "file", "f", "", "the manifest (acemq.yaml)")
	cmd.AddCommand(diff, apply)
	return cmd
}

func (e *env) diff(file string, extra bool) ([]topo.Difference, *runtime.Topology, error) {
	if file == "" {
		return nil, nil, bad("-f is required: the manifest (acemq.yaml)")
	}
	m, err := topo.Load(file)
	if err != nil {
		return nil, nil, &exitError{ExitBad, err}
	}
	t := topo.Topology(m)
	if _, err := t.Declarations(); err != nil {
		return nil, nil, &exitError{ExitBad, fmt.Errorf("%s: %w", file, err)}
	}
	client, vhost, err := e.management()
	if err != nil {
		return nil, nil, err
	}
	diffs, err := topo.Diff(client, vhost, t)
	if err != nil {
		return nil, nil, e.managementFailed(err)
	}
	if extra {
		own := make([]string, 0, len(m.Exchanges))
		for _, x := range m.Exchanges {
			own = append(own, x.Name)
		}
		extras, err := topo.Extras(client, vhost, t, topo.Roots(m), own)
		if err != nil {
			return nil, nil, e.managementFailed(err)
		}
		e.countExtras(extras)
		diffs = append(diffs, extras...)
	}
	return diffs, t, nil
}

// countExtras replaces the management API's depth of each extra queue
// (sampled every few seconds, so a fresh dead letter shows as 0) by the
// broker's own count, asked over AMQP; when the broker cannot be reached
// the sampled depth stays.
func (e *env) countExtras(extras []topo.Difference) {
	var queues []int
	for i, d := range extras {
		if d.Kind == "queue" {
			queues = append(queues, i)
		}
	}
	if len(queues) == 0 {
		return
	}
	ctx, cancel := signalContext()
	defer cancel()
	c, err := e.dial(ctx)
	if err != nil {
		return
	}
	defer c.Close(ctx)
	for _, i := range queues {
		if n, err := c.MessageCount(ctx, extras[i].Name); err == nil {
			extras[i].Messages = n
		}
	}
}
