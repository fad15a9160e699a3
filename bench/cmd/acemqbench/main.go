// Command acemqbench measures acemq-go side by side with raw amqp091-go and
// watermill-amqp against a real broker, and prints each case as a ratio of
// two throughputs measured in the same run, interleaved (A B A B …), the
// median of --pairs pairs with their spread, then one line per target and
// their count:
//
//	P1-avro holds: 0.93 >= 0.90
//	R1-of-safe-raw holds: 1.05 >= 1.00
//	C1-json-of-decoding-raw does not hold: 0.91 < 0.95
//	targets: 2 hold, 1 does not, 0 not measured
//
// A target on two cases (relatives: R1 against R1-safe-raw, rule 1's
// bound) is judged when both ran, and said "not measured" when only the
// first did.
//
// Run it from bench/ (make bench at the repository root does):
//
//	go run ./cmd/acemqbench --url amqp://guest:guest@localhost:5672/ --n 5000 --pairs 5
//
// Every queue is durable and classic, every message persistent; the queues
// are purged before each run. The baselines are written as each library's
// docs recommend: raw amqp091-go with a confirm window of 256 on publish and
// prefetch 256 with multiple acks on consume; raw publish waiting for each
// confirm; watermill-amqp's NewDurableQueueConfig, with and without
// ConfirmDelivery.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/pprof"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// options are the command line.
type options struct {
	url   string
	n     int
	pairs int
	cases string
	body  string
	cpu   string        // --cpuprofile
	cpuA  string        // --cpuprofile-a: the A sides' timed parts only
	rtt   time.Duration // --rtt: latency added by a proxy in front of the broker
	// holdBudget is R1's consumer's WithHoldBudget; below 0 the runtime's
	// default.
	holdBudget int
	// ackSlack is R1's consumer's WithAckSlack; below 0 the runtime's
	// default.
	ackSlack int
	// pg is the outbox cases' PostgreSQL (--pg); "" skips them.
	pg string
}

func main() { os.Exit(benchMain()) }

// benchMain is main returning its exit code, so the deferred profile is
// written before the process exits.
func benchMain() int {
	if len(os.Args) > 1 && os.Args[1] == "waiting" {
		if err := waitingMain(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "acemqbench:", err)
			return 1
		}
		return 0
	}
	var o options
	flag.StringVar(&o.url, "url", envOr("ACEMQ_TEST_URL", "amqp://guest:guest@localhost:5672/"), "the broker (AMQP URL)")
	flag.IntVar(&o.n, "n", 5000, "messages per run (R1 runs 10x as many; the wait-each and watermill-with-confirms sides a fifth)")
	flag.IntVar(&o.pairs, "pairs", 5, "interleaved pairs per case (at least 5 for a median worth reading)")
	flag.StringVar(&o.cases, "cases", "", "a regexp: run only the cases whose name matches")
	flag.StringVar(&o.body, "body", "1k", "body size: 1k (an order with 8 line items), 100 (an order without items) or both")
	flag.DurationVar(&o.rtt, "rtt", 0, "add this round-trip time between every client and the broker, through a forwarding proxy (as a broker one network hop away answers; 0: none)")
	flag.IntVar(&o.holdBudget, "hold-budget", -1, "R1's consumer's hold budget (runtime.WithHoldBudget); -1: the runtime's default")
	flag.IntVar(&o.ackSlack, "ack-slack", -1, "R1's consumer's ack slack (runtime.WithAckSlack); -1: the runtime's default")
	flag.StringVar(&o.pg, "pg", envOr("ACEMQ_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "the outbox cases' PostgreSQL (a schema of the run's own is made and dropped); empty: skip them")
	flag.StringVar(&o.cpu, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	flag.StringVar(&o.cpuA, "cpuprofile-a", "", "write a CPU profile of each A side's timed part (from its clock's start to its end) to this prefix, one file a run: PREFIX.<case>.<body>.<pair> (go tool pprof takes several); not with --cpuprofile")
	flag.Parse()
	if o.cpu != "" && o.cpuA != "" {
		fmt.Fprintln(os.Stderr, "acemqbench: --cpuprofile and --cpuprofile-a exclude each other (one profile at a time)")
		return 2
	}
	if o.cpu != "" {
		f, err := os.Create(o.cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, "acemqbench:", err)
			return 1
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "acemqbench:", err)
			return 1
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "acemqbench:", err)
		return 1
	}
	return 0
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// result is one case measured: the throughputs of each pair.
type result struct {
	c      benchCase
	size   string
	bytes  int
	a, b   []float64 // msg/s of each run
	ratios []float64
	// aCPU, bCPU are each run's CPU ns per message, aWrites, bWrites its
	// write system calls per message (cost.go).
	aCPU, bCPU, aWrites, bWrites []float64
	// aP50, aP99, bP50, bP99 are each run's round-trip latency
	// percentiles, in µs, for the cases that time round trips (RR1).
	aP50, aP99, bP50, bP99 []float64
}

func run(ctx context.Context, w io.Writer, o options) error {
	if o.pairs < 1 || o.n < 1 {
		return errors.New("--pairs and --n must be at least 1")
	}
	var filter *regexp.Regexp
	if o.cases != "" {
		var err error
		if filter, err = regexp.Compile(o.cases); err != nil {
			return fmt.Errorf("--cases: %w", err)
		}
	}
	var sizes []string
	switch o.body {
	case "1k", "100":
		sizes = []string{o.body}
	case "both":
		sizes = []string{"1k", "100"}
	default:
		return fmt.Errorf("--body %q: want 1k, 100 or both", o.body)
	}
	brokerURL := o.url
	if o.rtt > 0 {
		target, err := brokerAddr(o.url)
		if err != nil {
			return err
		}
		proxy, err := startLatencyProxy(target, o.rtt)
		if err != nil {
			return err
		}
		defer proxy.close()
		if brokerURL, err = viaProxy(o.url, proxy.addr()); err != nil {
			return err
		}
	}
	env, err := setup(ctx, brokerURL, o.holdBudget, o.ackSlack)
	if err != nil {
		return err
	}
	defer env.close()
	if o.pg != "" {
		if err := env.setupPG(ctx, o.pg); err != nil {
			return err
		}
	}

	var results []result
	for _, size := range sizes {
		if err := env.setSize(ctx, size); err != nil {
			return err
		}
		for _, c := range cases() {
			if filter != nil && !filter.MatchString(c.name) || c.pg && env.pg == nil {
				continue
			}
			r := result{c: c, size: size, bytes: env.bodyBytes(c)}
			for i := 0; i < o.pairs; i++ {
				if o.cpuA != "" {
					env.profile = fmt.Sprintf("%s.%s.%s.%d", o.cpuA, c.name, size, i+1)
				}
				a, err := env.measure(ctx, c.a, c.scale(o.n, true))
				env.profile = ""
				if err != nil {
					return fmt.Errorf("%s (%s): %w", c.name, c.aName, err)
				}
				r.aCPU, r.aWrites = append(r.aCPU, a.cpuNs), append(r.aWrites, a.writes)
				b, err := env.measure(ctx, c.b, c.scale(o.n, false))
				if err != nil {
					return fmt.Errorf("%s (%s): %w", c.name, c.bName, err)
				}
				r.bCPU, r.bWrites = append(r.bCPU, b.cpuNs), append(r.bWrites, b.writes)
				if a.p50 > 0 && b.p50 > 0 {
					r.aP50, r.aP99 = append(r.aP50, a.p50), append(r.aP99, a.p99)
					r.bP50, r.bP99 = append(r.bP50, b.p50), append(r.bP99, b.p99)
				}
				r.a, r.b = append(r.a, a.rate), append(r.b, b.rate)
				r.ratios = append(r.ratios, a.rate/b.rate)
			}
			results = append(results, r)
			fmt.Fprintf(os.Stderr, "done %s (%s body)\n", c.name, size)
		}
	}
	report(w, o, results)
	reportLatency(w, results)
	reportCost(w, results)
	return nil
}

// report prints the table and then one line per target, holding or not,
// and a count of them.
func report(w io.Writer, o options, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "case\tbody\tA\tA msg/s\tB\tB msg/s\tratio A/B (min–max)\ttarget\n")
	for _, r := range results {
		lo, hi := minMax(r.ratios)
		fmt.Fprintf(tw, "%s\t%s %dB\t%s\t%.0f\t%s\t%.0f\t%.2f (%.2f–%.2f)\t%s\n",
			r.c.name, r.size, r.bytes, r.c.aName, median(r.a), r.c.bName, median(r.b), median(r.ratios), lo, hi, targetColumn(r.c))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%d pairs per case, %d messages per run (R1: 10x; the wait-each and watermill-with-confirms sides: a fifth); medians, the spread is the ratios' min–max\n", o.pairs, o.n)
	if o.rtt > 0 {
		fmt.Fprintf(w, "every client reached the broker through a proxy adding a %v round trip (--rtt)\n", o.rtt)
	}
	var t tally
	for _, r := range results {
		if r.c.target == 0 {
			continue
		}
		t.verdict(w, labelled(o, r.c.name, r.size), median(r.ratios), r.c.target)
	}
	for _, rel := range relatives() {
		for _, of := range results {
			if of.c.name != rel.of {
				continue
			}
			name := labelled(o, rel.name, of.size)
			over, ok := find(results, rel.over, of.size)
			switch {
			case !ok && rel.target > 0:
				fmt.Fprintf(w, "%s not measured: %s did not run\n", name, rel.over)
				t.missing++
			case !ok:
			case rel.target == 0:
				fmt.Fprintf(w, "%s: %.2f (for reading: %s)\n", name, median(of.ratios)/median(over.ratios), rel.note)
			default:
				t.verdict(w, name, median(of.ratios)/median(over.ratios), rel.target)
			}
		}
	}
	if t.hold+t.fail+t.missing > 0 {
		fmt.Fprintf(w, "targets: %d hold, %d %s, %d not measured\n", t.hold, t.fail, plural(t.fail, "does not", "do not"), t.missing)
	}
}

// targetColumn is what the table's row is judged against: its own target
// and those of the relatives it is the first case of.
func targetColumn(c benchCase) string {
	var ts []string
	if c.target > 0 {
		ts = append(ts, fmt.Sprintf(">= %.2f", c.target))
	}
	for _, rel := range relatives() {
		if rel.of == c.name && rel.target > 0 {
			ts = append(ts, fmt.Sprintf(">= %.2f × %s", rel.target, rel.over))
		}
	}
	if len(ts) == 0 {
		return "—"
	}
	return strings.Join(ts, "; ")
}

// labelled is a verdict's name: the case's, with the body size when the run
// measured both.
func labelled(o options, name, size string) string {
	if o.body == "both" {
		return name + "/" + size
	}
	return name
}

// find is the case name's result with the body size.
func find(results []result, name, size string) (result, bool) {
	for _, r := range results {
		if r.c.name == name && r.size == size {
			return r, true
		}
	}
	return result{}, false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// tally counts the verdicts report printed.
type tally struct{ hold, fail, missing int }

// verdict prints one target's line: "NAME holds: 0.93 >= 0.90" or "NAME
// does not hold: 0.71 < 0.80", and counts it.
func (t *tally) verdict(w io.Writer, name string, m, target float64) {
	if m >= target {
		t.hold++
		fmt.Fprintf(w, "%s holds: %.2f >= %.2f\n", name, m, target)
	} else {
		t.fail++
		fmt.Fprintf(w, "%s does not hold: %.2f < %.2f\n", name, m, target)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// run is one side's run measured: its throughput in messages per second,
// and its process cost per message (cost.go).
// p50 and p99 are its round trips' latency percentiles in µs, for a case
// that times round trips (0 otherwise).
type sideRun struct{ rate, cpuNs, writes, p50, p99 float64 }

// measure runs f for n messages after purging every bench queue, and
// returns its throughput and cost.
func (e *env) measure(ctx context.Context, f runFunc, n int) (sideRun, error) {
	if err := e.purge(); err != nil {
		return sideRun{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	e.latencies = nil
	d, counted, err := f(ctx, e, n)
	if perr := e.stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return sideRun{}, err
	}
	if d <= 0 {
		return sideRun{}, errors.New("a run took no time")
	}
	cpu, writes := e.perMessage(max(counted, 1))
	r := sideRun{rate: float64(counted) / d.Seconds(), cpuNs: cpu, writes: writes}
	if len(e.latencies) > 0 {
		r.p50 = float64(percentile(e.latencies, 50)) / 1e3
		r.p99 = float64(percentile(e.latencies, 99)) / 1e3
	}
	return r, nil
}

// reportLatency prints, for the cases that time round trips, the medians
// over the pairs of each side's p50 and p99 round trip.
func reportLatency(w io.Writer, results []result) {
	var rows []result
	for _, r := range results {
		if len(r.aP50) > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nround trips (medians over the pairs): latency µs of each side, p50 and p99\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "case\tbody\tA p50\tA p99\tB p50\tB p99\tp50 A/B\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\n", r.c.name, r.size,
			median(r.aP50), median(r.aP99), median(r.bP50), median(r.bP99), median(r.aP50)/median(r.bP50))
	}
	_ = tw.Flush()
}
