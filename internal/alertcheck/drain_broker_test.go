package alertcheck

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// prometheusURL is the broker's own exporter (rabbitmq_prometheus):
// ACEMQ_TEST_PROMETHEUS_URL, else ACEMQ_TEST_URL's host on its AMQP port
// plus 10020 (15692 for 5672, the plugin's default).
func prometheusURL() string {
	if u := os.Getenv("ACEMQ_TEST_PROMETHEUS_URL"); u != "" {
		return strings.TrimSuffix(u, "/")
	}
	u, err := url.Parse(brokertest.URL())
	if err != nil {
		return ""
	}
	port := 5672
	if p, err := strconv.Atoi(u.Port()); err == nil {
		port = p
	}
	return "http://" + net.JoinHostPort(u.Hostname(), strconv.Itoa(port+10020))
}

// scrapeQueues reads the exporter's per-object metrics and keeps the
// series about queues (a queue label) of the queues named.
func scrapeQueues(t *testing.T, endpoint string, queues map[string]bool) map[string]float64 {
	t.Helper()
	resp, err := http.Get(endpoint + "/metrics/per-object")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", endpoint, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s/metrics/per-object: %v", endpoint, err)
	}
	snap := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			mine := false
			for _, lp := range m.GetLabel() {
				mine = mine || lp.GetName() == "queue" && queues[lp.GetValue()]
			}
			if !mine {
				continue
			}
			var v float64
			switch {
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			default:
				continue
			}
			snap[seriesName(name, m)] = v
		}
	}
	return snap
}

// The drain alerts of docs/metrics.md over RabbitMQ's own series: four
// queues each get 40 messages a second (the fast one 10) while one has a
// consumer that keeps up (fast), one a consumer that acks about 10 a second
// (slow), one a consumer stuck on its first message (stuck) and one none
// (idle). The broker's /metrics/per-object is scraped five times, 5.5s
// apart (its statistics move every 5s), each scrape a minute of promtool's
// time. At the last: "fewer acked than published" fires for slow and
// stuck alone; "nobody consuming" for idle alone; neither for fast.
func TestDrainAlertsOnRabbitMQsSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	root := moduleRoot(t)
	bin := promtool(t, root)
	exprs := docExprs(t, filepath.Join(root, "docs", "metrics.md"))
	behind := claim(t, exprs, "rabbitmq_channel_messages_acked_total")
	nobody := claim(t, exprs, "rabbitmq_queue_consumers")
	brokertest.Require(t)
	endpoint := prometheusURL()
	if resp, err := http.Get(endpoint + "/metrics/per-object"); err != nil || resp.StatusCode != http.StatusOK {
		if err == nil {
			resp.Body.Close()
			err = errors.New(resp.Status)
		}
		// Asked for (make test-rmq4 names the 4.0 node's): it must answer.
		// Else the broker may not run the plugin (the machine's 3.10 does
		// not: its default port is a cluster node's management port).
		if os.Getenv("ACEMQ_TEST_PROMETHEUS_URL") != "" {
			t.Fatalf("RabbitMQ's exporter does not answer at ACEMQ_TEST_PROMETHEUS_URL %s/metrics/per-object: %v", endpoint, err)
		}
		t.Skipf("no rabbitmq_prometheus at %s (set ACEMQ_TEST_PROMETHEUS_URL; make test-rmq4 does): %v", endpoint, err)
	} else {
		resp.Body.Close()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := runtime.Dial(ctx, brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	mt := runtime.NewTextType("alertcheck.drain")
	fast, slow, stuck, idle := brokertest.Queue(t, "alerts.fast"), brokertest.Queue(t, "alerts.slow"),
		brokertest.Queue(t, "alerts.stuck"), brokertest.Queue(t, "alerts.idle")
	for _, q := range []string{fast, slow, stuck, idle} {
		rawQueue(t, q)
	}
	release := make(chan struct{})
	sleep := func(d time.Duration) func(*runtime.Message[string]) runtime.Ack {
		return func(*runtime.Message[string]) runtime.Ack {
			select {
			case <-time.After(d):
			case <-release:
			}
			return runtime.Accept()
		}
	}
	consume(t, ctx, c, fast, mt, sleep(0), runtime.WithoutDeclare())
	consume(t, ctx, c, slow, mt, sleep(100*time.Millisecond), runtime.WithoutDeclare(), runtime.WithPrefetch(5))
	consume(t, ctx, c, stuck, mt, sleep(time.Hour), runtime.WithoutDeclare(), runtime.WithPrefetch(1))
	t.Cleanup(func() { close(release) }) // registered last: runs before the consumers' Close
	go func() {
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			qs := []string{slow, stuck, idle}
			if n%4 == 0 {
				qs = append(qs, fast)
			}
			for _, q := range qs {
				_ = runtime.Publish(ctx, c, mt, "", "x", runtime.WithRoutingKey(q))
			}
		}
	}()

	mine := map[string]bool{fast: true, slow: true, stuck: true, idle: true}
	var snaps snapshots
	time.Sleep(time.Second)
	for i := range 5 {
		if i > 0 {
			time.Sleep(5500 * time.Millisecond)
		}
		snaps = append(snaps, scrapeQueues(t, endpoint, mine))
	}
	cancel()
	last := snaps[len(snaps)-1]
	for _, want := range []string{
		`rabbitmq_queue_messages_ready{queue="` + slow + `"`, `rabbitmq_queue_consumers{queue="` + idle + `"`,
		`rabbitmq_channel_messages_acked_total{channel=`, `rabbitmq_queue_messages_published_total{channel=`,
	} {
		found := false
		for n := range last {
			found = found || strings.HasPrefix(n, want) || strings.Contains(n, want[strings.Index(want, "{"):]) && strings.HasPrefix(n, want[:strings.Index(want, "{")])
		}
		if !found {
			t.Fatalf("the last scrape has no series like %s…: %v", want, last)
		}
	}
	at := time.Duration(len(snaps)-1) * time.Minute
	q := func(names ...string) []map[string]string {
		var out []map[string]string
		for _, n := range names {
			out = append(out, map[string]string{"vhost": vhostOf(t), "queue": n})
		}
		return out
	}
	runPromtool(t, bin, map[string]expr{"AcksBehind": behind, "NobodyConsuming": nobody}, snaps.inputSeries(0), []alertCase{
		{at, "AcksBehind", q(slow, stuck)},
		{at, "NobodyConsuming", q(idle)},
	})
}

// vhostOf is the test broker's vhost as the exporter labels it.
func vhostOf(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimPrefix(u.Path, "/"); v != "" {
		if un, err := url.PathUnescape(v); err == nil {
			return un
		}
		return v
	}
	return "/"
}
