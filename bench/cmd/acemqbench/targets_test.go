package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestTargetsAreWhatCanBeReached pins every target the harness judges:
// issue 38 item 7 (issue 23's argument accepted) made R1's target
// R1 >= 1.00 × R1-safe-raw in the same run (rule 1's bound: no library
// that acks an original only after its copy's confirm can beat it) and
// C1-json's >= 0.95 × C1-json-decoding-raw (a raw consumer that decodes
// too); R1 and C1-json alone, and R1 against the unsafe R1-raw, are for
// reading. Every other target is the one it was.
func TestTargetsAreWhatCanBeReached(t *testing.T) {
	want := map[string]float64{
		"P1-avro": 0.85, "P1-json": 0.85, "P1-avro-all": 0.90, "P1-json-all": 0.80,
		"P1-avro-async": 0.95, "P1-json-async": 0.90, "P1-jsonref-async": 0.80,
		"P2": 10, "P32-avro": 0.90, "P32-json": 0.90,
		"C1-avro": 0.90, "C1-avro-ackeach": 1.00, "C1-json-ackeach": 0.90,
		"O1-avro": 0.60, "O1-json": 0.60, "I1": 0.90, "M1": 0.98,
		"RR1-1": 0.90, "RR1-64": 0.90, "X1-consume": 1.20,
		// the relatives
		"R1-of-safe-raw": 1.00, "C1-json-of-decoding-raw": 0.95,
		"X1-publish-of-raw": 0.90, "X1-publish-of-raw32": 0.90, "P1-avro-all-of-raw": 0.90,
	}
	got := map[string]float64{}
	names := map[string]bool{}
	for _, c := range cases() {
		names[c.name] = true
		if c.target != 0 {
			got[c.name] = c.target
		}
	}
	for _, rel := range relatives() {
		if !names[rel.of] || !names[rel.over] {
			t.Errorf("%s relates %s to %s: not both are cases", rel.name, rel.of, rel.over)
		}
		if rel.target != 0 {
			got[rel.name] = rel.target
		}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s's target = %v, want %v", name, got[name], w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s has a target (%v) no issue set", name, g)
		}
	}
}

// fakeResult is a case measured with these ratios (the throughputs do not
// enter a verdict).
func fakeResult(name, size string, ratios ...float64) result {
	for _, c := range cases() {
		if c.name == name {
			return result{c: c, size: size, bytes: 1000, a: ratios, b: ratios, ratios: ratios}
		}
	}
	panic("no case " + name)
}

// TestReportJudgesEachTarget feeds report made-up medians and reads its
// verdict lines: a relative target holds or not on the quotient of the two
// medians, a row whose target is relative gets no verdict of its own, the
// table's target column says what the row is judged against, a target
// whose second case did not run says so, and the last line counts.
func TestReportJudgesEachTarget(t *testing.T) {
	results := []result{
		fakeResult("R1", "1k", 0.55, 0.56, 0.60),          // median 0.56
		fakeResult("R1-raw", "1k", 0.80, 0.86, 0.90),      // 0.86
		fakeResult("R1-safe-raw", "1k", 0.50, 0.53, 0.54), // 0.53
		fakeResult("C1-json", "1k", 0.82),
		fakeResult("C1-json-decoding-raw", "1k", 0.90), // 0.82/0.90 = 0.91 < 0.95
		fakeResult("X1-consume", "1k", 1.25),
		fakeResult("P1-avro-all", "1k", 0.93), // P1-batch-raw did not run
	}
	var out bytes.Buffer
	report(&out, options{n: 40, pairs: 3, body: "1k"}, results)
	text := out.String()
	for _, line := range []string{
		"R1-of-safe-raw holds: 1.06 >= 1.00",
		"R1-of-raw: 0.65 (for reading: R1-raw does not keep rule 1)",
		"C1-json-of-decoding-raw does not hold: 0.91 < 0.95",
		"X1-consume holds: 1.25 >= 1.20",
		"P1-avro-all holds: 0.93 >= 0.90",
		"P1-avro-all-of-raw not measured: P1-batch-raw did not run",
		"targets: 3 hold, 1 does not, 1 not measured",
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).MatchString(text) {
			t.Errorf("no line %q:\n%s", line, text)
		}
	}
	for _, name := range []string{"R1", "C1-json"} {
		if regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (holds|does not hold)`).MatchString(text) {
			t.Errorf("%s has a verdict of its own; its target is relative:\n%s", name, text)
		}
	}
	for _, row := range []string{`R1 .*>= 1\.00 × R1-safe-raw$`, `C1-json .*>= 0\.95 × C1-json-decoding-raw$`,
		`P1-avro-all .*>= 0\.90; >= 0\.90 × P1-batch-raw$`, `R1-raw .*—$`} {
		if !regexp.MustCompile(`(?m)^` + row).MatchString(text) {
			t.Errorf("no table row matching %q:\n%s", row, text)
		}
	}
	if strings.Contains(text, "no target yet") {
		t.Errorf("a relative printed as without a target:\n%s", text)
	}
}
