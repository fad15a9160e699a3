package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	"github.com/spf13/cobra"
)

func (e *env) scheduleCommand() *cobra.Command {
	var (
		file                  string
		multiplier, jitter    float64
		threshold, giveUpAfer time.Duration
	)
	cmd := &cobra.Command{
		Use:   "schedule (-f acemq.yaml [POLICY] | exponential ATTEMPTS INITIAL MAX | fixed ATTEMPTS DELAY)",
		Short: "the waits of a retry policy, and which of them the broker holds (rungs) and which the consumer",
		Long: `schedule prints a retry policy's waits, without jitter, one per failed attempt,
and who holds each: the consumer (in memory, with jitter) below the broker
threshold (30s unless wait_in_broker_from says), the broker's rung queue
q.retry.<N>s from it. A wait the consumer holds spills to the rung for it
(rounded up to whole seconds) once the consumer's hold budget is full. With
-f, every policy of the manifest (or POLICY) and the rung queues of the
queues that use it. Needs no broker.`,
		Example: `  acemq schedule -f acemq.yaml
  acemq schedule -f acemq.yaml standard
  acemq schedule exponential 6 10s 300s
  acemq schedule fixed 3 1s`,
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			tune := func(p runtime.RetryPolicy) runtime.RetryPolicy {
				if cmd.Flags().Changed("multiplier") {
					p = p.WithMultiplier(multiplier)
				}
				if cmd.Flags().Changed("jitter") {
					p = p.WithJitter(jitter)
				}
				if cmd.Flags().Changed("wait-in-broker-from") {
					p = p.WithWaitInBrokerFrom(threshold)
				}
				if giveUpAfer > 0 {
					p = p.WithGiveUpAfter(giveUpAfer)
				}
				return p
			}
			if file != "" {
				return e.scheduleFile(file, args)
			}
			if len(args) == 0 {
				return bad("schedule: give -f acemq.yaml, or a policy: exponential ATTEMPTS INITIAL MAX, fixed ATTEMPTS DELAY")
			}
			p, err := policyOf(args)
			if err != nil {
				return err
			}
			p = tune(p)
			if err := p.Validate(); err != nil {
				return bad("%w", err)
			}
			e.printSchedule(strings.Join(args, " "), p, nil)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "", "the manifest whose policies to show")
	fl.Float64Var(&multiplier, "multiplier", 2, "exponential: the factor between waits")
	fl.Float64Var(&jitter, "jitter", 0, "the jitter of waits held in memory (0.2: ±20%)")
	fl.DurationVar(&threshold, "wait-in-broker-from", wire.DefaultWaitInBrokerFrom, "waits from this long are held by the broker (0: never)")
	fl.DurationVar(&giveUpAfer, "give-up-after", 0, "dead-letter a message older than this")
	return cmd
}

func policyOf(args []string) (runtime.RetryPolicy, error) {
	var p runtime.RetryPolicy
	usage := "want exponential ATTEMPTS INITIAL MAX or fixed ATTEMPTS DELAY (e.g. exponential 6 10s 300s)"
	kind := args[0]
	want := map[string]int{"exponential": 4, "fixed": 3}[kind]
	if want == 0 || len(args) != want {
		return p, bad("schedule %s: %s", strings.Join(args, " "), usage)
	}
	attempts, err := strconv.Atoi(args[1])
	if err != nil || attempts < 1 {
		return p, bad("schedule: attempts %q: want a whole number from 1", args[1])
	}
	var ds []time.Duration
	for _, a := range args[2:] {
		d, err := time.ParseDuration(a)
		if err != nil || d <= 0 {
			return p, bad("schedule: %q: want a positive duration such as 10s or 5m", a)
		}
		ds = append(ds, d)
	}
	if kind == "fixed" {
		return runtime.Fixed(attempts, ds[0]), nil
	}
	return runtime.Exponential(attempts, ds[0], ds[1]), nil
}

func (e *env) scheduleFile(file string, args []string) error {
	if len(args) > 1 {
		return bad("schedule -f %s: at most one POLICY, got %d arguments", file, len(args))
	}
	m, err := topo.Load(file)
	if err != nil {
		return &exitError{ExitBad, err}
	}
	var names []string
	shown := 0
	for _, p := range m.Policies {
		names = append(names, p.Name)
		if len(args) == 1 && args[0] != p.Name {
			continue
		}
		var queues []string
		for _, q := range m.Queues {
			if q.Retry != nil && q.Retry.Name == p.Name {
				queues = append(queues, q.Name)
			}
		}
		if shown > 0 {
			fmt.Fprintln(e.stdout)
		}
		e.printSchedule(p.Name, p.Value, queues)
		shown++
	}
	if shown == 0 {
		if len(args) == 1 {
			return bad("schedule: %s has no policy %q; its policies are %s", file, args[0], strings.Join(names, ", "))
		}
		fmt.Fprintf(e.stdout, "%s has no retry policies: every queue gets one delivery (NoRetry)\n", file)
	}
	return nil
}

func (e *env) printSchedule(name string, p runtime.RetryPolicy, queues []string) {
	fmt.Fprintf(e.stdout, "%s: %s\n", name, p)
	rungOf := func(d time.Duration) string {
		q := "q"
		if len(queues) > 0 {
			q = queues[0]
		}
		return wire.RungQueue(q, d)
	}
	for i, d := range p.Schedule() {
		if wire.InBroker(d, p.WaitInBrokerFrom()) {
			fmt.Fprintf(e.stdout, "  after attempt %d: wait %s in the broker (%s)\n", i+1, d, rungOf(d))
			continue
		}
		j := ""
		if p.Jitter() > 0 {
			j = fmt.Sprintf(", ±%g%% jitter", p.Jitter()*100)
		}
		if r, ok := wire.SpillRung(d, p.WaitInBrokerFrom()); ok {
			j += fmt.Sprintf("; past its hold budget in the broker (%s)", rungOf(r))
		}
		fmt.Fprintf(e.stdout, "  after attempt %d: wait %s in the consumer%s\n", i+1, d, j)
	}
	fmt.Fprintf(e.stdout, "  after attempt %d: dead letter (gave up after %d attempts)\n", p.Attempts(), p.Attempts())
	if age := p.GiveUpAfter(); age > 0 {
		fmt.Fprintf(e.stdout, "  older than %s: dead letter at its next failure\n", age)
	}
	for _, q := range queues {
		var rungs []string
		for _, d := range wire.Rungs(wire.Waits(p.Attempts(), p.Delay), p.WaitInBrokerFrom()) {
			rungs = append(rungs, wire.RungQueue(q, d))
		}
		if len(rungs) == 0 {
			fmt.Fprintf(e.stdout, "  %s: no rung queues (every wait is held by the consumer)\n", q)
		} else {
			fmt.Fprintf(e.stdout, "  %s: rung queues %s\n", q, strings.Join(rungs, ", "))
		}
	}
}
