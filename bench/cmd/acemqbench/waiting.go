package main

// acemqbench waiting: issue 24's comparison of the ways a quorum queue's
// failed message can wait in the broker — the runtime's rung queues, and
// RabbitMQ 4.3's own delayed retry (x-delayed-retry-type/min/max, the
// message requeued with basic.reject and held back by the queue) — and
// issue 40's third: the delay topology (the handler publishes the message
// again WithDelay, classic or quorum levels, and accepts it once that is
// confirmed: what a retry_in_broker: delay would do). n
// messages, each failing once and waiting --wait before it is handled:
// how fast they get into waiting, how long until all are back, and the
// broker's memory while they wait (the management API's breakdown).
//
//	go run ./cmd/acemqbench waiting --url amqp://guest:guest@127.0.0.1:5677/ \
//	    --mgmt http://guest:guest@127.0.0.1:15677 --n 10000 --wait 60s
//
// It is not a ratio case of the main table: one run of each side takes
// --wait and more, and the native side needs RabbitMQ 4.3 (before 4.3 it is
// skipped, with the reason).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// waitOptions are the waiting subcommand's command line.
type waitOptions struct {
	url, mgmt string
	n         int
	wait      time.Duration
	sides     []string
	// settle is how long after the last message got into waiting the
	// memory is sampled (the broker's collectors run meanwhile).
	settle time.Duration
	// samples is how many memory samples, a second apart, each figure is
	// the median of.
	samples int
}

// The sides of the comparison.
const (
	sideRungs       = "rungs"        // classic rung queue <q>.retry.<N>s
	sideQuorumRungs = "quorum-rungs" // rungs: {type: quorum}
	sideNative      = "native"       // x-delayed-retry on the queue itself
	sideDelay       = "delay"        // the delay topology, classic levels
	sideQuorumDelay = "quorum-delay" // the delay topology, quorum levels
)

// delaySide is whether side waits in the delay topology, and with which
// levels.
func delaySide(side string) (runtime.QueueType, bool) {
	switch side {
	case sideDelay:
		return runtime.Classic, true
	case sideQuorumDelay:
		return runtime.Quorum, true
	}
	return "", false
}

func waitingMain(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("waiting", flag.ContinueOnError)
	var o waitOptions
	var sides string
	fs.StringVar(&o.url, "url", envOr("ACEMQ_TEST_URL", "amqp://guest:guest@localhost:5672/"), "the broker (AMQP URL)")
	fs.StringVar(&o.mgmt, "mgmt", "", "the broker's management API (http://user:pass@host:port); default: the AMQP URL's host and user on port 15672, or 15677 for 5677")
	fs.IntVar(&o.n, "n", 10000, "messages, each failing once")
	fs.DurationVar(&o.wait, "wait", 60*time.Second, "the wait of the one retry (whole seconds)")
	fs.DurationVar(&o.settle, "settle", 10*time.Second, "how long after the last message got into waiting the memory is sampled")
	fs.IntVar(&o.samples, "samples", 3, "memory samples a second apart; each figure is their median")
	fs.StringVar(&sides, "sides", strings.Join([]string{sideRungs, sideQuorumRungs, sideNative, sideDelay, sideQuorumDelay}, ","), "which sides to run, in order")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.n < 1 || o.samples < 1 || o.wait < time.Second || o.wait%time.Second != 0 {
		return errors.New("waiting: --n and --samples must be at least 1 and --wait a whole number of seconds, at least 1s")
	}
	o.sides = strings.Split(sides, ",")
	for _, s := range o.sides {
		if _, delay := delaySide(s); !delay && s != sideRungs && s != sideQuorumRungs && s != sideNative {
			return fmt.Errorf("waiting: --sides %q: want %s, %s, %s, %s or %s", s, sideRungs, sideQuorumRungs, sideNative, sideDelay, sideQuorumDelay)
		}
	}
	if o.mgmt == "" {
		var err error
		if o.mgmt, err = defaultMgmt(o.url); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(o.sides))*(3*o.wait+5*time.Minute))
	defer cancel()
	return runWaiting(ctx, w, o)
}

// defaultMgmt is the management API beside the AMQP URL u.
func defaultMgmt(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("waiting: --url: %w", err)
	}
	port := "15672"
	if pt := p.Port(); pt != "" && pt != "5672" {
		n, _ := strconv.Atoi(pt)
		port = strconv.Itoa(n + 10000)
	}
	m := url.URL{Scheme: "http", User: p.User, Host: p.Hostname() + ":" + port}
	return m.String(), nil
}

// waitResult is one side measured.
type waitResult struct {
	side    string
	skipped string // why the side did not run
	// intoWaiting is from the consumer's start until every message's
	// first failure was settled (in its rung, or requeued to wait).
	intoWaiting time.Duration
	// allBack is from the consumer's start until every message was
	// handled on its second attempt; firstBack until the first was.
	firstBack, allBack time.Duration
	// memory: the broker's breakdown with the side's queues declared and
	// empty, with the n messages ready, and while they wait.
	empty, ready, waiting memorySample
	// cpu: this process's and the broker's CPU time per message, getting
	// them into waiting (start until all retried) and getting them back
	// (from a second before the first is due until all are handled); the
	// broker's is -1 when its process cannot be read (not on this machine).
	clientIn, clientBack, brokerIn, brokerBack float64
	// early counts second attempts that came back before --wait had
	// passed since their first failure (the broker's timing is checked,
	// not assumed).
	early int64
	// late is each message's second attempt minus its first failure
	// minus --wait, sorted: the delay's error.
	late []time.Duration
}

func runWaiting(ctx context.Context, w io.Writer, o waitOptions) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	conn, err := runtime.Dial(ctx, o.url, runtime.WithLogger(log))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	raw, err := amqp.Dial(o.url)
	if err != nil {
		return fmt.Errorf("raw dial: %w", err)
	}
	defer func() { _ = raw.Close() }()
	version, _ := raw.Properties["version"].(string)
	mg := &mgmt{base: o.mgmt, samples: o.samples}
	node, err := mg.node(ctx)
	if err != nil {
		return err
	}
	if mg.pid, err = mg.osPID(ctx, node); err != nil {
		return err
	}
	fmt.Fprintf(w, "waiting: RabbitMQ %s (node %s), %d messages (the 1k order in Avro), each failing once and waiting %s, prefetch 256; load %s\n",
		version, node, o.n, o.wait, loadAvg())
	var results []waitResult
	for _, side := range o.sides {
		r := waitResult{side: side}
		if side == sideNative && !atLeast43(version) {
			r.skipped = fmt.Sprintf("RabbitMQ %s has no quorum-queue delayed retry (x-delayed-retry-*, 4.3 and later)", version)
		} else if err := measureWaiting(ctx, conn, raw, mg, node, o, &r); err != nil {
			return fmt.Errorf("%s: %w", side, err)
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "done %s\n", side)
	}
	reportWaiting(w, o, results)
	return nil
}

// atLeast43 reports whether a server version string is 4.3 or later.
func atLeast43(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (major > 4 || major == 4 && minor >= 3)
}

// sideTopology is the side's queue: a quorum queue whose one retry of
// policy waits in rungs or in the queue itself.
func sideTopology(side, q string, policy runtime.RetryPolicy) runtime.Queue {
	rq := runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true}
	switch side {
	case sideRungs:
		rq.Retry = policy
	case sideQuorumRungs:
		rq.Retry, rq.QuorumRungs = policy, true
	case sideNative:
		// delay = min(min × x-delivery-count, max): the first requeue
		// waits min.
		ms := policy.Delay(1).Milliseconds()
		rq.Arguments = map[string]any{
			wire.ArgDelayedRetryType: "failed",
			wire.ArgDelayedRetryMin:  ms,
			wire.ArgDelayedRetryMax:  ms,
		}
	}
	return rq
}

func measureWaiting(ctx context.Context, conn *runtime.Connection, raw *amqp.Connection, mg *mgmt, node string, o waitOptions, r *waitResult) error {
	q := "bench.wait." + r.side
	policy := runtime.Fixed(2, o.wait)
	rq := sideTopology(r.side, q, policy)
	ch, err := raw.Channel()
	if err != nil {
		return err
	}
	defer func() { _ = ch.Close() }()
	derived := []string{wire.RungQueue(q, o.wait), wire.DeadLetterQueue(q), wire.ParkedQueue(q)}
	// A delay side's exchange (the delay topology delivers to a named
	// one), and its levels of their own.
	levels, delay := delaySide(r.side)
	ex, prefix := q+".ex", q+wire.DelayPrefixSuffix
	top := runtime.NewTopology().Queue(rq)
	if delay {
		top.Exchange(ex, amqp.ExchangeDirect)
		top.Bindings = append(top.Bindings, runtime.Binding{Queue: q, Exchange: ex, RoutingKey: q})
		top.Delay, top.DelayPrefix = levels, prefix
	}
	drop := func() {
		for _, name := range append([]string{q}, derived...) {
			_, _ = ch.QueueDelete(name, false, false, false)
		}
		if delay {
			for k := range wire.DelayLevels {
				_, _ = ch.QueueDelete(wire.DelayLevel(prefix, k), false, false, false)
				_ = ch.ExchangeDelete(wire.DelayLevel(prefix, k), false, false)
			}
			_ = ch.ExchangeDelete(wire.DelayDelivery(prefix), false, false)
			_ = ch.ExchangeDelete(ex, false, false)
		}
	}
	drop()
	defer drop()
	if err := conn.Declare(ctx, top); err != nil {
		return err
	}
	if r.empty, err = mg.memory(ctx, node); err != nil {
		return err
	}
	typ := orders.TypeOfOrderAvro()
	_, value := orders.Values("1k")
	batch := make([]orders.OrderAvro, 256)
	for i := range batch {
		batch[i] = value
	}
	for done := 0; done < o.n; done += len(batch) {
		if err := runtime.PublishBatch(ctx, conn, typ, "", batch[:min(len(batch), o.n-done)], runtime.WithRoutingKey(q)); err != nil {
			return fmt.Errorf("fill %s: %w", q, err)
		}
	}
	time.Sleep(o.settle)
	if r.ready, err = mg.memory(ctx, node); err != nil {
		return err
	}

	// The handler fails each message's first attempt and accepts its
	// second, remembering when each id failed. On a delay side the first
	// attempt publishes the message again WithDelay (its id kept) and is
	// accepted once the broker confirms it (rule 1, as a rung's copy).
	failed := map[string]int64{}
	var mu sync.Mutex
	var back, firstBack, lastBack, early, delayed atomic.Int64
	var publishErr atomic.Value
	var start time.Time
	allBack := make(chan struct{})
	h := runtime.Handle(typ, func(_ context.Context, m *runtime.Message[orders.OrderAvro]) runtime.Ack {
		now := time.Now().UnixNano()
		mu.Lock()
		at, seen := failed[m.Envelope.ID]
		if !seen {
			failed[m.Envelope.ID] = now
		}
		mu.Unlock()
		if !seen && delay {
			err := runtime.Publish(ctx, conn, typ, ex, m.Payload, runtime.WithRoutingKey(q), runtime.WithDelay(o.wait), runtime.WithMessageID(m.Envelope.ID))
			if err != nil {
				publishErr.Store(err)
				return runtime.Retry(err)
			}
			delayed.Add(1)
			return runtime.Accept()
		}
		if !seen {
			return runtime.Retry(errFailing)
		}
		if time.Duration(now-at) < o.wait-50*time.Millisecond {
			early.Add(1)
		}
		mu.Lock()
		r.late = append(r.late, time.Duration(now-at)-o.wait)
		mu.Unlock()
		since := now - start.UnixNano()
		firstBack.CompareAndSwap(0, since)
		lastBack.Store(since)
		if back.Add(1) == int64(o.n) {
			close(allBack)
		}
		return runtime.Accept()
	})
	spec := runtime.ConsumerSpec{Queue: q, Retry: &policy, Routes: []runtime.Route{h}, RequeueOnFailure: r.side == sideNative}
	if delay {
		spec.Retry = nil // the wait is the handler's publish, not a retry
	}
	cpu0, bcpu0 := processCost().cpu, mg.brokerCPU()
	start = time.Now()
	copts := []runtime.ConsumeOption{runtime.WithPrefetch(256)}
	if delay {
		// The handler waits for each copy's confirm: 32 at a time, as
		// the rungs' copies are pipelined.
		copts = append(copts, runtime.WithConcurrency(32))
	}
	c, err := runtime.Consume(ctx, conn, spec, copts...)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Close(cctx)
	}()
	intoWaiting := func() int64 {
		if delay {
			return delayed.Load()
		}
		return c.Stats().Handled["retried"]
	}
	for intoWaiting() < int64(o.n) {
		if err, _ := publishErr.Load().(error); err != nil {
			return fmt.Errorf("into waiting: %w", err)
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return fmt.Errorf("into waiting: %d of %d retried: %w", intoWaiting(), o.n, err)
		}
	}
	r.intoWaiting = time.Since(start)
	r.clientIn, r.brokerIn = perMsg(cpu0, processCost().cpu, o.n), perMsg(bcpu0, mg.brokerCPU(), o.n)
	if err := sleepCtx(ctx, o.settle); err != nil {
		return err
	}
	if b := back.Load(); b > 0 {
		return fmt.Errorf("%d messages came back within --settle %s of getting into waiting (wait %s): raise --wait", b, o.settle, o.wait)
	}
	if r.waiting, err = mg.memory(ctx, node); err != nil {
		return err
	}
	if err := sleepCtx(ctx, time.Until(start.Add(o.wait-time.Second))); err != nil {
		return err
	}
	cpu1, bcpu1 := processCost().cpu, mg.brokerCPU()
	select {
	case <-allBack:
	case <-ctx.Done():
		return fmt.Errorf("back: %d of %d: %w", back.Load(), o.n, ctx.Err())
	}
	r.clientBack, r.brokerBack = perMsg(cpu1, processCost().cpu, o.n), perMsg(bcpu1, mg.brokerCPU(), o.n)
	r.firstBack, r.allBack = time.Duration(firstBack.Load()), time.Duration(lastBack.Load())
	r.early = early.Load()
	mu.Lock()
	slices.Sort(r.late)
	mu.Unlock()
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// memorySample is the node's memory breakdown, bytes by category, its
// total as the node counts it (the erlang total, which the categories sum
// to) and the process's resident size.
type memorySample struct {
	total, rss int64
	by         map[string]int64
}

// mgmt is the broker's management API.
type mgmt struct {
	base    string
	samples int
	pid     string // the node's OS process
}

func (m *mgmt) osPID(ctx context.Context, node string) (string, error) {
	var n struct {
		PID string `json:"os_pid"`
	}
	if err := m.get(ctx, "/api/nodes/"+url.PathEscape(node), &n); err != nil {
		return "", err
	}
	return n.PID, nil
}

// brokerCPU is the node's CPU time so far (user and system), from
// /proc/<os_pid>/stat; -1 when it cannot be read (a broker on another
// machine, or in another PID namespace).
func (m *mgmt) brokerCPU() time.Duration {
	b, err := os.ReadFile("/proc/" + m.pid + "/stat")
	if err != nil || m.pid == "" {
		return -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return -1
	}
	// Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the
	// command's closing parenthesis, in clock ticks (100 a second on
	// Linux).
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// perMsg is the CPU between two readings, in µs a message; -1 when either
// could not be read.
func perMsg(from, to time.Duration, n int) float64 {
	if from < 0 || to < 0 {
		return -1
	}
	return float64(to-from) / float64(n) / 1e3
}

func (m *mgmt) get(ctx context.Context, path string, into any) error {
	u, err := url.Parse(m.base)
	if err != nil {
		return fmt.Errorf("--mgmt: %w", err)
	}
	user := u.User
	u.User = nil
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(u.String(), "/")+path, nil)
	if err != nil {
		return err
	}
	if user != nil {
		pass, _ := user.Password()
		req.SetBasicAuth(user.Username(), pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("management API: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("management API %s: %s: %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

func (m *mgmt) node(ctx context.Context) (string, error) {
	var ov struct {
		Node string `json:"node"`
	}
	if err := m.get(ctx, "/api/overview", &ov); err != nil {
		return "", err
	}
	return ov.Node, nil
}

// memory samples the node's breakdown m.samples times a second apart and
// keeps each category's median.
func (m *mgmt) memory(ctx context.Context, node string) (memorySample, error) {
	var samples []map[string]int64
	for i := range m.samples {
		if i > 0 {
			if err := sleepCtx(ctx, time.Second); err != nil {
				return memorySample{}, err
			}
		}
		var body struct {
			Memory map[string]json.RawMessage `json:"memory"`
		}
		if err := m.get(ctx, "/api/nodes/"+url.PathEscape(node)+"/memory", &body); err != nil {
			return memorySample{}, err
		}
		s := map[string]int64{}
		for k, v := range body.Memory {
			var n int64
			if json.Unmarshal(v, &n) == nil {
				s[k] = n
				continue
			}
			var t struct {
				Erlang int64 `json:"erlang"`
				RSS    int64 `json:"rss"`
			}
			if k == "total" && json.Unmarshal(v, &t) == nil {
				s["total"], s["rss"] = t.Erlang, t.RSS
			}
		}
		samples = append(samples, s)
	}
	out := memorySample{by: map[string]int64{}}
	for k := range samples[0] {
		vs := make([]int64, 0, len(samples))
		for _, s := range samples {
			vs = append(vs, s[k])
		}
		slices.Sort(vs)
		out.by[k] = vs[len(vs)/2]
	}
	out.total, out.rss = out.by["total"], out.by["rss"]
	// The erlang total is the sum of the others; these two are the
	// allocator's slack on top of it (the rss strategy's).
	for _, k := range []string{"total", "rss", "allocated_unused", "reserved_unallocated"} {
		delete(out.by, k)
	}
	return out, nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// reportWaiting prints one line per side and the memory categories that
// moved most between empty and waiting.
func reportWaiting(w io.Writer, o waitOptions, results []waitResult) {
	for _, r := range results {
		if r.skipped != "" {
			fmt.Fprintf(w, "%-13s skipped: %s\n", r.side, r.skipped)
			continue
		}
		rate := float64(o.n) / r.intoWaiting.Seconds()
		fmt.Fprintf(w, "%-13s into waiting %8.0f msg/s (%s), first back %s, all back %s, early %d; broker memory (erlang) empty %s, ready %s, waiting %s (%+.1f MiB over empty, %+.0f B a message over ready; rss %s waiting)\n",
			r.side, rate, r.intoWaiting.Round(time.Millisecond), r.firstBack.Round(time.Millisecond), r.allBack.Round(time.Millisecond), r.early,
			mib(r.empty.total), mib(r.ready.total), mib(r.waiting.total), float64(r.waiting.total-r.empty.total)/(1<<20),
			float64(r.waiting.total-r.ready.total)/float64(o.n), mib(r.waiting.rss))
		type delta struct {
			k string
			d int64
		}
		var ds []delta
		for k, v := range r.waiting.by {
			ds = append(ds, delta{k, v - r.empty.by[k]})
		}
		sort.Slice(ds, func(i, j int) bool { return abs64(ds[i].d) > abs64(ds[j].d) })
		var parts []string
		for _, d := range ds[:min(5, len(ds))] {
			parts = append(parts, fmt.Sprintf("%s %+.1f MiB", d.k, float64(d.d)/(1<<20)))
		}
		fmt.Fprintf(w, "%-13s   waiting minus empty, by category: %s\n", "", strings.Join(parts, ", "))
		fmt.Fprintf(w, "%-13s   late against the wait: p50 %s, p99 %s, max %s\n", "",
			quantile(r.late, 0.5), quantile(r.late, 0.99), quantile(r.late, 1))
		fmt.Fprintf(w, "%-13s   CPU µs a message: into waiting client %.0f, broker %s; back client %.0f, broker %s\n", "",
			r.clientIn, cpuText(r.brokerIn), r.clientBack, cpuText(r.brokerBack))
	}
}

func cpuText(us float64) string {
	if us < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", us)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// loadAvg is the machine's load average, as the report's context.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// quantile is the q-quantile of sorted, to the millisecond.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := min(max(int(q*float64(len(sorted))+0.5)-1, 0), len(sorted)-1)
	return sorted[i].Round(time.Millisecond)
}
