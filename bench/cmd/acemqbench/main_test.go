package main

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestEveryCaseRuns runs every case once with a few messages against the
// test broker (brokertest.Require: under CI=true an unreachable broker
// fails the test) and checks the table has a row per case and a verdict
// line per target. It is the harness's smoke test, not a measurement.
func TestEveryCaseRuns(t *testing.T) {
	url := ownVhost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	pg := requirePG(t)
	if err := run(ctx, &out, options{url: url, n: 40, pairs: 1, body: "both", holdBudget: -1, ackSlack: -1, pg: pg}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, c := range cases() {
		if c.pg && pg == "" {
			continue
		}
		for _, size := range []string{"1k", "100"} {
			row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c.name) + ` +` + size + ` [0-9]+B `)
			if !row.MatchString(text) {
				t.Errorf("no row for %s with the %s body:\n%s", c.name, size, text)
			}
			if c.target == 0 {
				continue
			}
			verdict := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c.name+"/"+size) + ` (holds: [0-9.]+ >= |does not hold: [0-9.]+ < )[0-9.]+$`)
			if !verdict.MatchString(text) {
				t.Errorf("no verdict line for %s/%s:\n%s", c.name, size, text)
			}
		}
	}
	for _, rel := range relatives() {
		for _, size := range []string{"1k", "100"} {
			line := ` (holds: [0-9.]+ >= |does not hold: [0-9.]+ < )[0-9.]+$`
			if rel.target == 0 {
				line = `: [0-9.]+ \(for reading: ` + regexp.QuoteMeta(rel.note) + `\)$`
			}
			verdict := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(rel.name+"/"+size) + line)
			if !verdict.MatchString(text) {
				t.Errorf("no verdict line for %s/%s:\n%s", rel.name, size, text)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^targets: [0-9]+ hold, [0-9]+ do(es)? not, 0 not measured$`).MatchString(text) {
		t.Errorf("no count of the verdicts, or a target not measured:\n%s", text)
	}
	if !strings.Contains(text, "1 pairs per case, 40 messages per run") {
		t.Errorf("the table does not say how it was made:\n%s", text)
	}
}

// requirePG is the outbox cases' database: ACEMQ_TEST_PG_URL or the
// machine's, when it answers; under CI=true one that does not fails the
// test, elsewhere its cases are left out ("").
func requirePG(t *testing.T) string {
	u := envOr("ACEMQ_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatalf("ACEMQ_TEST_PG_URL: %v", err)
	}
	host := parsed.Host
	if parsed.Port() == "" {
		host = net.JoinHostPort(parsed.Hostname(), "5432")
	}
	conn, err := net.DialTimeout("tcp", host, 3*time.Second)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no PostgreSQL at %s for the outbox cases (CI=true: a missing database fails): %v", parsed.Redacted(), err)
		}
		t.Logf("no PostgreSQL at %s: the outbox cases are left out (make stores starts it)", parsed.Redacted())
		return ""
	}
	conn.Close()
	return u
}

func TestMedianAndSpread(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median(3,1,2) = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 2, 3}); got != 2.5 {
		t.Errorf("median(4,1,2,3) = %v, want 2.5", got)
	}
	if lo, hi := minMax([]float64{0.9, 0.7, 1.1}); lo != 0.7 || hi != 1.1 {
		t.Errorf("minMax = %v, %v, want 0.7, 1.1", lo, hi)
	}
}
