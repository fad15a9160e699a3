package main

import (
	"context"
	"math"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// After the scripted run, /metrics (scraped over HTTP from the Prometheus
// exporter the program wires, parsed with Prometheus's own text parser)
// holds the story in numbers: 2 orders published by the application, A-1
// consumed 4 times and given up on (3 retries, gave_up_attempts 1), A-2
// rejected (2 dead-letter copies sent), the two dead letters pulled to be
// shown (consumed, operation receive), the replay moving 1, and A-1
// accepted on its way back: 6 deliveries consumed by the consumer.
func TestMetricsScrapedAfterTheScenario(t *testing.T) {
	url := acemqtest.VHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mp, h, err := newMetrics()
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Shutdown(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveMetrics(ln, h)
	defer srv.Close()
	var out strings.Builder
	if err := run(ctx, url, &out, runtime.WithMeterProvider(mp)); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	// run returns once A-1 was reserved; its ack is counted right after.
	var fams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fams = scrape(t, "http://"+ln.Addr().String()+"/metrics")
		if sum(fams["acemq_outcome_total"], map[string]string{"acemq_outcome": "accepted"}) == 1 || time.Now().After(deadline) {
			break
		}
	}
	for name, typ := range map[string]dto.MetricType{
		"messaging_client_sent_messages_total":        dto.MetricType_COUNTER,
		"messaging_client_consumed_messages_total":    dto.MetricType_COUNTER,
		"messaging_client_operation_duration_seconds": dto.MetricType_HISTOGRAM,
		"messaging_process_duration_seconds":          dto.MetricType_HISTOGRAM,
		"acemq_outcome_total":                         dto.MetricType_COUNTER,
		"acemq_replay_moved_total":                    dto.MetricType_COUNTER,
		"acemq_retry_rung_missing_total":              dto.MetricType_COUNTER,
		"acemq_set_aside_failed_total":                dto.MetricType_COUNTER,
	} {
		f := fams[name]
		switch {
		case f == nil:
			t.Errorf("no family %s in the scrape", name)
		case f.GetType() != typ:
			t.Errorf("%s is a %s, want a %s", name, f.GetType(), typ)
		case f.GetHelp() == "":
			t.Errorf("%s has no HELP", name)
		}
	}
	// One series in full: every label the exporter gives it, the scope's
	// included.
	app := map[string]string{
		"acemq_message_type": "order.placed.v2", "acemq_publish": "application",
		"messaging_destination_name": "orders", "messaging_operation_name": "publish",
		"messaging_operation_type": "send", "messaging_system": "rabbitmq",
		"otel_scope_name": "github.com/acemq/acemq-go/runtime",
	}
	if got := series(fams["messaging_client_sent_messages_total"], app); len(got) != 1 {
		t.Errorf("sent{acemq_publish=application}: %d series, want 1", len(got))
	} else if labels := labelNames(got[0]); !sameNames(labels, app, "otel_scope_version", "otel_scope_schema_url") {
		t.Errorf("sent{acemq_publish=application} has labels %v, want exactly %v (and the scope's version)", labels, app)
	}
	for _, c := range []struct {
		name string
		want float64
		with map[string]string
	}{
		{"messaging_client_sent_messages_total", 2, app},
		{"messaging_client_sent_messages_total", 2, map[string]string{"acemq_publish": "dead_letter", "error_type": ""}},
		{"messaging_client_sent_messages_total", 0, map[string]string{"error_type": "*"}},
		{"messaging_client_consumed_messages_total", 6, map[string]string{"messaging_destination_name": "orders.new", "messaging_operation_name": "process"}},
		{"acemq_outcome_total", 3, map[string]string{"acemq_outcome": "retried", "messaging_destination_name": "orders.new"}},
		{"acemq_outcome_total", 1, map[string]string{"acemq_outcome": "gave_up_attempts"}},
		{"acemq_outcome_total", 1, map[string]string{"acemq_outcome": "rejected"}},
		{"acemq_outcome_total", 1, map[string]string{"acemq_outcome": "accepted"}},
		{"acemq_outcome_total", 6, nil},
		{"acemq_replay_moved_total", 1, map[string]string{"messaging_destination_name": "orders.new.dlq"}},
		{"messaging_client_consumed_messages_total", 2, map[string]string{"messaging_destination_name": "orders.new.dlq", "messaging_operation_name": "receive", "acemq_message_type": "order.placed.v2"}},
		{"messaging_process_duration_seconds", 6, nil},
		{"messaging_process_duration_seconds", 5, map[string]string{"error_type": "*"}},
	} {
		if got := sum(fams[c.name], c.with); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.with, got, c.want)
		}
	}
	// The failure counters of the consumer's queue are there at 0 from its
	// start, so that Prometheus sees their first increase (the alerts).
	for _, name := range []string{"acemq_retry_rung_missing_total", "acemq_set_aside_failed_total", "acemq_registry_unavailable_total"} {
		if got := series(fams[name], map[string]string{"messaging_destination_name": "orders.new"}); len(got) != 1 || got[0].GetCounter().GetValue() != 0 {
			t.Errorf("%s{orders.new}: %v, want one series at 0", name, got)
		}
	}
	// The histogram's buckets are the conventions' boundaries, cumulative,
	// ending with +Inf at its count.
	if hs := series(fams["messaging_process_duration_seconds"], nil); len(hs) > 0 {
		h := hs[0].GetHistogram()
		b := h.GetBucket()
		if len(b) != 15 || b[0].GetUpperBound() != 0.005 || b[13].GetUpperBound() != 10 || !math.IsInf(b[14].GetUpperBound(), 1) {
			t.Errorf("process duration buckets %v, want the 14 of the conventions (0.005 … 10) and +Inf", b)
		} else if b[14].GetCumulativeCount() != h.GetSampleCount() {
			t.Errorf("bucket +Inf counts %d, want the histogram's %d samples", b[14].GetCumulativeCount(), h.GetSampleCount())
		}
	}
	if t.Failed() {
		t.Logf("scraped:\n%s", dump(fams))
	}
}

// scrape GETs url and parses it with Prometheus's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); expfmt.ResponseFormat(resp.Header).FormatType() != expfmt.TypeTextPlain {
		t.Fatalf("GET %s: Content-Type %q, want Prometheus's text format", url, ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// series are the metrics of f whose labels match every one of with: a
// value, "" for a label the metric has not, "*" for any value of a label
// it has.
func series(f *dto.MetricFamily, with map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for k, want := range with {
			got, has := labels[k]
			switch want {
			case "":
				ok = ok && !has
			case "*":
				ok = ok && has
			default:
				ok = ok && got == want
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// sum adds up the matching series: a counter's or gauge's value, a
// histogram's sample count.
func sum(f *dto.MetricFamily, with map[string]string) float64 {
	var total float64
	for _, m := range series(f, with) {
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}

func labelNames(m *dto.Metric) []string {
	var names []string
	for _, lp := range m.GetLabel() {
		names = append(names, lp.GetName())
	}
	sort.Strings(names)
	return names
}

// sameNames says whether names are want's keys, plus any of optional.
func sameNames(names []string, want map[string]string, optional ...string) bool {
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := want[n]; !ok && !contains(optional, n) {
			return false
		}
		seen[n] = true
	}
	for k := range want {
		if !seen[k] {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dump is the acemq and messaging families, for a failure's log.
func dump(fams map[string]*dto.MetricFamily) string {
	var b strings.Builder
	names := make([]string, 0, len(fams))
	for n := range fams {
		if strings.HasPrefix(n, "acemq_") || strings.HasPrefix(n, "messaging_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		_, _ = expfmt.MetricFamilyToText(&b, fams[n])
	}
	return b.String()
}
