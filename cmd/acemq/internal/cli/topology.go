package cli

import (
	"fmt"

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
argument fails at declare time. Run it before the deploy. It reads through
the management API (--mgmt-url). topology apply declares what is missing and
refuses, naming the queue and the argument, when something exists with other
arguments; it never deletes.`,
		Example: "  acemq topology diff -f acemq.yaml\n  acemq topology apply -f acemq.yaml",
	}
	var file string
	diff := &cobra.Command{
		Use:     "diff -f acemq.yaml",
		Short:   "what differs between the manifest and the broker; exit 1 with one line per difference",
		Example: "  acemq topology diff -f acemq.yaml\n  acemq topology diff -f acemq.yaml --mgmt-url http://rabbit:15672",
		Args:    exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, args []string) error {
			diffs, t, err := e.diff(file)
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
			return &exitError{ExitFail, fmt.Errorf("%d %s between %s and the broker", len(diffs), word, file)}
		},
	}
	diff.Flags().StringVarP(&file, "file", "f", "", "the manifest (acemq.yaml)")
	var applyFile string
	apply := &cobra.Command{
		Use:     "apply -f acemq.yaml",
		Short:   "declare what the manifest has and the broker lacks; never changes or deletes",
		Example: "  acemq topology apply -f acemq.yaml",
		Args:    exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, args []string) error {
			diffs, t, err := e.diff(applyFile)
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
			for _, d := range diffs {
				fmt.Fprintf(e.stdout, "declared %s\n", d.String()[len("missing "):])
			}
			return nil
		},
	}
	apply.Flags().StringVarP(&applyFile, "file", "f", "", "the manifest (acemq.yaml)")
	cmd.AddCommand(diff, apply)
	return cmd
}

func (e *env) diff(file string) ([]topo.Difference, *runtime.Topology, error) {
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
		return nil, nil, failed(fmt.Errorf("management API: %w", err))
	}
	return diffs, t, nil
}
