package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/acemqtest"
	"github.com/acemq/acemq-go/runtime"
)

// After the scripted run, /metrics (scraped over HTTP from the Prometheus
// exporter the program wires) holds the story in numbers: 2 orders
// published by the application, A-1 consumed 4 times and given up on (3
// retries, dead_lettered 1), A-2 rejected (2 dead-letter copies sent), the
// replay moving 1, and A-1 accepted on its way back: 6 deliveries consumed.
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
	var out bytes.Buffer
	if err := run(ctx, url, &out, runtime.WithMeterProvider(mp)); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	// run returns once A-1 was reserved; its ack is counted right after.
	var text string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		text = scrape(t, "http://"+ln.Addr().String()+"/metrics")
		if sample(text, "acemq_outcome_total", `acemq_outcome="accepted"`) == 1 || time.Now().After(deadline) {
			break
		}
	}
	for _, c := range []struct {
		name string
		want float64
		with []string
	}{
		{"messaging_client_sent_messages_total", 2, []string{`acemq_publish="application"`, `messaging_system="rabbitmq"`, `messaging_destination_name="orders"`, `acemq_message_type="order.placed.v2"`}},
		{"messaging_client_sent_messages_total", 2, []string{`acemq_publish="dead_letter"`, `error_type=""`}},
		{"messaging_client_consumed_messages_total", 6, []string{`messaging_destination_name="orders.new"`}},
		{"acemq_outcome_total", 3, []string{`acemq_outcome="retried"`, `messaging_destination_name="orders.new"`}},
		{"acemq_outcome_total", 1, []string{`acemq_outcome="dead_lettered"`}},
		{"acemq_outcome_total", 1, []string{`acemq_outcome="rejected"`}},
		{"acemq_outcome_total", 1, []string{`acemq_outcome="accepted"`}},
		{"acemq_replay_moved_total", 1, []string{`messaging_destination_name="orders.new.dlq"`}},
		{"messaging_process_duration_seconds_count", 6, nil},
	} {
		if got := sample(text, c.name, c.with...); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, strings.Join(c.with, ","), got, c.want)
		}
	}
	if t.Failed() {
		t.Logf("scraped:\n%s", grepAcemq(text))
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? ([0-9.eE+-]+)$`)

// sample sums the samples of name whose labels hold every one of with
// (label="value"; label="" matches a sample without that label).
func sample(text, name string, with ...string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m == nil || m[1] != name {
			continue
		}
		ok := true
		for _, w := range with {
			if strings.HasSuffix(w, `=""`) {
				if strings.Contains(m[2], strings.TrimSuffix(w, `""`)) {
					ok = false
				}
				continue
			}
			if !strings.Contains(m[2], w) {
				ok = false
			}
		}
		if v, err := strconv.ParseFloat(m[3], 64); ok && err == nil {
			sum += v
		}
	}
	return sum
}

func grepAcemq(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "acemq_") || strings.HasPrefix(line, "messaging_client_") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
