package jsoncheck

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// numberEdges are the texts the bound comparison must get right: zeros in
// every spelling, numbers a float64 rounds onto a bound, exponents, long
// digit strings.
var numberEdges = []string{
	"0", "-0", "0.0", "-0.0", "0e5", "0E-5", "-0e+0", "0.000", "1e-400", "-1e-400", "1E-400",
	"1", "-1", "1.0", "10", "1e1", "0.1e2", "100e-2", "1.5", "-1.5", "-2.5", "-2.50", "-25e-1",
	"-2.5000000000000000000000001", "-2.4999999999999999999999999", "1000.5", "1000.50",
	"1000.5000000000000000000001", "1000.4999999999999999999999", "10005e-1", "1e21", "1E+21",
	"1e+21", "1000000000000000000000", "1000000000000000000000.0000000000000000000000001",
	"999999999999999999999.99999999999999999999", "1.7976931348623157e308", "5e-324",
	"123456789012345678901234567890", "0.000000000000000000000000000001", "-9.99e-5",
}

// parseDecimal's order is big.Rat's (what the reference validator
// compares with): on the edges against each other, and on random numbers
// against the edges.
func TestDecimalCmpIsBigRats(t *testing.T) {
	texts := append([]string{}, numberEdges...)
	r := rand.New(rand.NewPCG(3, 4))
	for range 4000 {
		texts = append(texts, randomNumber(r))
	}
	rat := func(s string) *big.Rat {
		x, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		return x
	}
	for i, a := range texts {
		da, ok := parseDecimal(a)
		if !ok {
			t.Fatalf("parseDecimal(%q) refused a number", a)
		}
		ra := rat(a)
		for j, b := range texts {
			if i >= len(numberEdges) && j >= len(numberEdges) {
				break
			}
			db, ok := parseDecimal(b)
			if !ok {
				t.Fatalf("parseDecimal(%q) refused a number", b)
			}
			if got, want := da.cmp(&db), ra.Cmp(rat(b)); got != want {
				t.Errorf("cmp(%s, %s) = %d, big.Rat says %d", a, b, got, want)
			}
		}
	}
}

func randomNumber(r *rand.Rand) string {
	var sb strings.Builder
	if r.IntN(2) == 0 {
		sb.WriteByte('-')
	}
	switch r.IntN(3) {
	case 0:
		sb.WriteByte('0')
	default:
		sb.WriteByte(byte('1' + r.IntN(9)))
		for range r.IntN(6) {
			sb.WriteByte("0123456789000"[r.IntN(13)])
		}
	}
	if r.IntN(2) == 0 {
		sb.WriteByte('.')
		for range r.IntN(6) + 1 {
			sb.WriteByte("0123456789000"[r.IntN(13)])
		}
	}
	if r.IntN(3) == 0 {
		fmt.Fprintf(&sb, "%s%s%d", []string{"e", "E"}[r.IntN(2)], []string{"", "+", "-"}[r.IntN(3)], r.IntN(30))
	}
	return sb.String()
}

// What is not a JSON number, or is past the limits, is refused: the scan
// leaves such a value to the reference.
func TestParseDecimalRefuses(t *testing.T) {
	for _, s := range []string{"", "-", "+1", ".5", "1.", "1e", "1e+", "--1", "1x", "0x10", "1e100001",
		"null", `"1"`, strings.Repeat("7", maxDecimalDigits+1), "0." + strings.Repeat("0", 60) + "1" + strings.Repeat("3", maxDecimalDigits)} {
		if _, ok := parseDecimal(s); ok {
			t.Errorf("parseDecimal(%q) took it", s)
		}
	}
	// Zeros do not count against the digits' limit.
	for _, s := range []string{strings.Repeat("0", 1) + "." + strings.Repeat("0", 200) + "1", "1" + strings.Repeat("0", 40) + "." + strings.Repeat("0", 40)} {
		if _, ok := parseDecimal(s); !ok {
			t.Errorf("parseDecimal(%q) refused it", s)
		}
	}
}

// The scan decides a float64's bounds on the number's text: numbers a
// float64 rounds onto the bound are violations or not as the text says,
// and the scan is never undecided about a number it can read.
func TestScanNumberBounds(t *testing.T) {
	shape := &Shape{Kind: Object, Fields: []Member{
		{Name: "min0", Shape: &Shape{Kind: Number, Minimum: "0"}},
		{Name: "xmax", Shape: &Shape{Kind: Number, ExclusiveMaximum: "1000.5"}},
		{Name: "xmin", Shape: &Shape{Kind: Number, ExclusiveMinimum: "-2.5", Maximum: "1e+21"}},
		{Name: "list", Shape: &Shape{Kind: Array, Elem: &Shape{Kind: Number, Minimum: "0", Null: true}}},
	}}
	for _, c := range []struct {
		body, want string // want: the violations' locations, "" none
	}{
		{`{"min0":0}`, ""}, {`{"min0":-0}`, ""}, {`{"min0":0.0}`, ""}, {`{"min0":0e5}`, ""},
		{`{"min0":1e-400}`, ""}, {`{"min0":-1e-400}`, "/min0"}, {`{"min0":-0.0000000000000000000000001}`, "/min0"},
		{`{"min0":-1}`, "/min0"}, {`{"xmax":1000.5}`, "/xmax"}, {`{"xmax":1000.49999999999999999999}`, ""},
		{`{"xmax":1000.50000000000000000001}`, "/xmax"}, {`{"xmax":10005e-1}`, "/xmax"},
		{`{"xmin":-2.5}`, "/xmin"}, {`{"xmin":-2.4999999999999999999999}`, ""}, {`{"xmin":1e21}`, ""},
		{`{"xmin":1E+21}`, ""}, {`{"xmin":1000000000000000000000.0000000000000000000001}`, "/xmin"},
		{`{"list":[0, null, -0, 1e-400, -1e-400, 2]}`, "/list/4"},
		{`{ "min0" : 0 , "xmax" : 1000.5 }`, "/xmax"},
	} {
		var ch Check
		Scan(&ch, []byte(c.body), shape)
		if ch.IsUndecided() {
			t.Errorf("%s: undecided", c.body)
			continue
		}
		var got []string
		for _, v := range ch.violations {
			got = append(got, v.Location)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: violations at %q, want %q (%v)", c.body, strings.Join(got, " "), c.want, ch.violations)
		}
	}
	// A number past the limits is the reference's to decide.
	var ch Check
	Scan(&ch, []byte(`{"min0":`+strings.Repeat("9", 60)+`}`), shape)
	if !ch.IsUndecided() {
		t.Errorf("a 60-digit number: decided (%v)", ch.violations)
	}
}

func BenchmarkScanNumber(b *testing.B) {
	shape := &Shape{Kind: Object, Fields: []Member{{Name: "total", Required: true, Shape: &Shape{Kind: Number, Minimum: "0"}}}}
	body := []byte(`{"total":0}`)
	b.ReportAllocs()
	var ch Check // reused, as the codec's pooled one is
	for b.Loop() {
		Scan(&ch, body, shape)
		if !ch.Passed() {
			b.Fatal(ch.violations)
		}
		ch.reset()
	}
}

func BenchmarkScanNumberAny(b *testing.B) {
	shape := &Shape{Kind: Object, Fields: []Member{{Name: "total", Required: true, Shape: &Shape{}}}}
	body := []byte(`{"total":0}`)
	b.ReportAllocs()
	var ch Check
	for b.Loop() {
		Scan(&ch, body, shape)
		ch.reset()
	}
}
