package main

import (
	"bytes"
	"context"
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
	if err := run(ctx, &out, options{url: url, n: 40, pairs: 1, body: "both", holdBudget: -1}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, c := range cases() {
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
	if !strings.Contains(text, "1 pairs per case, 40 messages per run") {
		t.Errorf("the table does not say how it was made:\n%s", text)
	}
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
