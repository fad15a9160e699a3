package alertcheck

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	amqp "github.com/rabbitmq/amqp091-go"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// expr is one PromQL expression of a ```promql block.
type expr struct {
	line int // of its first line in the page
	text string
}

// docExprs are the expressions of the ```promql blocks of a Markdown
// file: a line starting with # (a comment) or a blank line ends one.
func docExprs(t *testing.T, path string) []expr {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expr
	var cur []string
	start, in := 0, false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, expr{start, strings.Join(cur, "\n")})
		}
		cur = nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !in && line == "```promql":
			in = true
		case in && line == "```":
			flush()
			in = false
		case in && (line == "" || strings.HasPrefix(line, "#")):
			flush()
		case in:
			if len(cur) == 0 {
				start = n
			}
			cur = append(cur, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// claim takes from exprs the one expression that mentions metric, and
// fails when there is not exactly one.
func claim(t *testing.T, exprs []expr, metric string) expr {
	t.Helper()
	var found []expr
	for _, e := range exprs {
		if strings.Contains(e.text, metric) {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("docs/metrics.md: %d ```promql expressions use %s, want 1: %v", len(found), metric, found)
	}
	return found[0]
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// promtool is the promtool to run: on PATH, else the one
// scripts/promtool.sh unpacked.
func promtool(t *testing.T, root string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs promtool: skipped under -short (the broker-free quick test)")
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	p := filepath.Join(root, ".tools", "bin", "promtool")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: no promtool on PATH or at %s (make tools runs scripts/promtool.sh)", p)
	}
	t.Skipf("no promtool (make tools, or bash scripts/promtool.sh)")
	return ""
}

// Every ```promql expression of docs/metrics.md is claimed by a test
// here: one added to the page without a test fails this.
func TestEveryDocumentedExpressionIsTested(t *testing.T) {
	exprs := docExprs(t, filepath.Join(moduleRoot(t), "docs", "metrics.md"))
	tested := []string{
		"acemq_retry_rung_missing_total", "acemq_set_aside_failed_total", "acemq_outcome_total", // TestDocumentedAlertsOnTheRuntimesSeries
		"rabbitmq_", // TestDrainAlertsOnRabbitMQsSeries
	}
	for _, e := range exprs {
		ok := false
		for _, m := range tested {
			ok = ok || strings.Contains(e.text, m)
		}
		if !ok {
			t.Errorf("docs/metrics.md:%d: a ```promql expression no test here evaluates:\n%s", e.line, e.text)
		}
	}
}

// snapshots are what the exporter held at each of several moments, in
// order: each series (name and labels) and its value, absent before it
// first appeared.
type snapshots []map[string]float64

// take gathers reg: every acemq_ counter's series and value.
func (s *snapshots) take(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	snap := map[string]float64{}
	for _, f := range fams {
		if f.GetType() != dto.MetricType_COUNTER || !strings.HasPrefix(f.GetName(), "acemq_") {
			continue
		}
		for _, m := range f.GetMetric() {
			snap[seriesName(f.GetName(), m)] = m.GetCounter().GetValue()
		}
	}
	*s = append(*s, snap)
	return snap
}

// seriesName is a series as PromQL writes it: name{label="value",...}.
func seriesName(name string, m *dto.Metric) string {
	var labels []string
	for _, lp := range m.GetLabel() {
		labels = append(labels, lp.GetName()+"="+strconv.Quote(lp.GetValue()))
	}
	sort.Strings(labels)
	return name + "{" + strings.Join(labels, ",") + "}"
}

// inputSeries turns the snapshots into promtool's input series, one
// sample a minute (snapshot i at minute i, "_" while a series did not
// exist yet), then the last value held for another `hold` minutes.
func (s snapshots) inputSeries(hold int) []map[string]string {
	names := map[string]bool{}
	for _, snap := range s {
		for n := range snap {
			names[n] = true
		}
	}
	var out []map[string]string
	for n := range names {
		var vals []string
		last := ""
		for _, snap := range s {
			if v, ok := snap[n]; ok {
				last = strconv.FormatFloat(v, 'f', -1, 64)
				vals = append(vals, last)
			} else {
				vals = append(vals, "_")
			}
		}
		if hold > 0 {
			vals = append(vals, last+"+0x"+strconv.Itoa(hold))
		}
		out = append(out, map[string]string{"series": n, "values": strings.Join(vals, " ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["series"] < out[j]["series"] })
	return out
}

// alertCase is an alert's expected firing at one evaluation time: the
// values of its labels, one map per alert (none: it must not fire).
type alertCase struct {
	at     time.Duration
	alert  string
	labels []map[string]string
}

// runPromtool writes the rules (alert name → expression) and the test, and
// runs promtool test rules on them.
func runPromtool(t *testing.T, bin string, rules map[string]expr, series []map[string]string, cases []alertCase) {
	t.Helper()
	dir := t.TempDir()
	var rs []map[string]string
	for name, e := range rules {
		rs = append(rs, map[string]string{"alert": name, "expr": e.text})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i]["alert"] < rs[j]["alert"] })
	writeJSON(t, filepath.Join(dir, "rules.yml"), map[string]any{"groups": []any{map[string]any{"name": "docs/metrics.md", "rules": rs}}})
	var tests []map[string]any
	for _, c := range cases {
		exp := []map[string]any{}
		for _, l := range c.labels {
			exp = append(exp, map[string]any{"exp_labels": l})
		}
		tests = append(tests, map[string]any{"eval_time": c.at.String(), "alertname": c.alert, "exp_alerts": exp})
	}
	writeJSON(t, filepath.Join(dir, "test.yml"), map[string]any{
		"rule_files":          []string{"rules.yml"},
		"evaluation_interval": "1m",
		"tests":               []any{map[string]any{"interval": "1m", "input_series": series, "alert_rule_test": tests}},
	})
	cmd := exec.Command(bin, "test", "rules", "test.yml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		test, _ := os.ReadFile(filepath.Join(dir, "test.yml"))
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("promtool: %v", err)
		}
		t.Fatalf("promtool test rules failed (exit %d):\n%s\nrules: %v\ntest: %s", ee.ExitCode(), out, rules, test)
	}
	t.Logf("promtool test rules:\n%s", out)
}

// writeJSON writes v as JSON, which is YAML, as promtool reads it.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The two alerts of docs/metrics.md, "The two alerts worth having", over
// the series the runtime really exports through OpenTelemetry's Prometheus
// exporter while the broker makes each failure happen: a consumer whose
// rung queue was deleted (its retry waits in memory: rung.missing 1), and
// one whose dead letters have no q.dlq to go to (set_aside.failed at each
// try). The exporter is gathered before anything is published (minute 0),
// then after each failed try (minutes 1..3), and the last values are held
// for 20 minutes: the rung alert fires for the rung's queue alone from
// minute 1 until 10 minutes pass without an increase; the set-aside alert
// fires for the other queue alone, until 5 minutes after the last failure;
// the dead-letter growth alert fires for a third queue, whose first
// message was rejected into its q.dlq, until an hour without another.
func TestDocumentedAlertsOnTheRuntimesSeries(t *testing.T) {
	root := moduleRoot(t)
	bin := promtool(t, root)
	exprs := docExprs(t, filepath.Join(root, "docs", "metrics.md"))
	rungExpr := claim(t, exprs, "acemq_retry_rung_missing_total")
	setAsideExpr := claim(t, exprs, "acemq_set_aside_failed_total")
	growthExpr := claim(t, exprs, "acemq_outcome_total")
	brokertest.Require(t)

	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := runtime.Dial(ctx, brokertest.URL(), runtime.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	mt := runtime.NewTextType("alertcheck.text")

	// A queue whose 1s rung is gone: its first attempt retries.
	rungQ := brokertest.Queue(t, "alerts.rung")
	policy := runtime.Fixed(2, time.Second).WithWaitInBrokerFrom(time.Second)
	if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: rungQ, Retry: policy})); err != nil {
		t.Fatal(err)
	}
	deleteQueue(t, wire.RungQueue(rungQ, time.Second))
	consume(t, ctx, c, rungQ, mt, func(m *runtime.Message[string]) runtime.Ack {
		if m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("once more"))
		}
		return runtime.Accept()
	}, runtime.WithRetry(policy))
	// A queue with no q.dlq: every dead letter is returned.
	homeless := brokertest.Queue(t, "alerts.setaside")
	rawQueue(t, homeless)
	consume(t, ctx, c, homeless, mt, func(*runtime.Message[string]) runtime.Ack {
		return runtime.Reject(errors.New("nowhere to go"))
	}, runtime.WithoutDeclare())

	// A queue whose first message is rejected, with its q.dlq: the first
	// dead letter (acemq.outcome rejected is born at 1).
	rejects := brokertest.Queue(t, "alerts.rejects")
	if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: rejects, DeadLetter: true})); err != nil {
		t.Fatal(err)
	}
	consume(t, ctx, c, rejects, mt, func(*runtime.Message[string]) runtime.Ack {
		return runtime.Reject(errors.New("no customer id"))
	})

	var snaps snapshots
	snaps.take(t, reg) // minute 0: the consumers up, nothing published
	for _, q := range []string{rungQ, homeless, rejects} {
		if err := runtime.Publish(ctx, c, mt, "", "x", runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
	}
	rung := counterSeries("acemq_retry_rung_missing_total", rungQ)
	failed := counterSeries("acemq_set_aside_failed_total", homeless)
	rejected := "acemq_outcome_total{acemq_message_type=" + strconv.Quote(mt.Name()) + ",acemq_outcome=\"rejected\",messaging_destination_name=" + strconv.Quote(rejects)
	for want := 1.0; want <= 3; want++ { // minutes 1, 2, 3: after each failed try
		deadline := time.Now().Add(30 * time.Second)
		for {
			snap := map[string]float64{}
			fams, _ := reg.Gather()
			for _, f := range fams {
				for _, m := range f.GetMetric() {
					snap[seriesName(f.GetName(), m)] = m.GetCounter().GetValue()
				}
			}
			if valueOf(snap, rung) == 1 && valueOf(snap, failed) >= want && valueOf(snap, rejected) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 30s: %s %v, %s %v, %s %v (want 1, ≥ %v, 1)", rung, valueOf(snap, rung), failed, valueOf(snap, failed), rejected, valueOf(snap, rejected), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
		snaps.take(t, reg)
	}

	dest := func(q string) []map[string]string { return []map[string]string{{"messaging_destination_name": q}} }
	runPromtool(t, bin, map[string]expr{"RungMissing": rungExpr, "SetAsideFailed": setAsideExpr, "DeadLetters": growthExpr}, snaps.inputSeries(70), []alertCase{
		{0, "RungMissing", nil},
		{time.Minute, "RungMissing", dest(rungQ)},
		{3 * time.Minute, "RungMissing", dest(rungQ)},
		{10 * time.Minute, "RungMissing", dest(rungQ)}, // the increase from minute 0 to 1 is in [0m, 10m]
		{11 * time.Minute, "RungMissing", nil},
		{0, "SetAsideFailed", nil},
		{time.Minute, "SetAsideFailed", dest(homeless)},
		{7 * time.Minute, "SetAsideFailed", dest(homeless)}, // the last failure, minute 2 to 3, is in [2m, 7m]
		{8 * time.Minute, "SetAsideFailed", nil},
		{0, "DeadLetters", nil},
		{time.Minute, "DeadLetters", dest(rejects)},
		{60 * time.Minute, "DeadLetters", dest(rejects)}, // an hour ago (minute 0) it did not exist yet
		{62 * time.Minute, "DeadLetters", nil},           // there an hour ago, no increase since
	})
}

// counterSeries names the queue's series of a runtime counter by the
// prefix its name and label give it (the scope labels follow).
func counterSeries(name, queue string) string {
	return name + "{" + "messaging_destination_name=" + strconv.Quote(queue)
}

// valueOf is the value of the series whose name starts with prefix.
func valueOf(snap map[string]float64, prefix string) float64 {
	for n, v := range snap {
		if strings.HasPrefix(n, prefix) {
			return v
		}
	}
	return 0
}

func consume(t *testing.T, ctx context.Context, c *runtime.Connection, q string, mt *runtime.MessageType[string],
	h func(*runtime.Message[string]) runtime.Ack, opts ...runtime.ConsumeOption) {
	t.Helper()
	cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(mt, func(_ context.Context, m *runtime.Message[string]) runtime.Ack { return h(m) }),
	}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(context.Background()) })
}

func channel(t *testing.T) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func rawQueue(t *testing.T, q string) {
	t.Helper()
	if _, err := channel(t).QueueDeclare(q, true, false, false, false, nil); err != nil {
		t.Fatal(fmt.Errorf("declare %s: %w", q, err))
	}
}

func deleteQueue(t *testing.T, q string) {
	t.Helper()
	if _, err := channel(t).QueueDelete(q, false, false, false); err != nil {
		t.Fatal(fmt.Errorf("delete %s: %w", q, err))
	}
}
