package jsoncheck

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"
)

// marshalled is json.Marshal(v), or nil when it fails.
func marshalled(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func checkString(t testing.TB, s string) {
	t.Helper()
	want := marshalled(t, s)
	if got := AppendString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Fatalf("AppendString(%q) = %s, json.Marshal %s", s, got[1:], want)
	}
}

func checkFloat(t testing.TB, f float64, bits int) {
	t.Helper()
	var want []byte
	if bits == 32 {
		want = marshalled(t, float32(f))
		f = float64(float32(f))
	} else {
		want = marshalled(t, f)
	}
	got, ok := AppendFloat(nil, f, bits)
	if ok != (want != nil) || ok && !bytes.Equal(got, want) {
		t.Fatalf("AppendFloat(%v, %d) = %s, %v; json.Marshal %s", f, bits, got, ok, want)
	}
}

func checkTime(t testing.TB, tm time.Time) {
	t.Helper()
	want := marshalled(t, tm)
	got, ok := AppendTime([]byte("x"), tm)
	if ok != (want != nil) || ok && !bytes.Equal(got[1:], want) || string(got[:1]) != "x" {
		t.Fatalf("AppendTime(%v) = %q, %v; json.Marshal %s", tm, got, ok, want)
	}
}

// TestAppendIsMarshal: the helpers the generated encoders write with
// give json.Marshal's bytes: every one- and two-byte string, the escapes,
// U+2028/U+2029, bytes that are not UTF-8; floats at the 'e' cut-offs, -0,
// subnormals, NaN and the infinities refused; times at the edges of RFC
// 3339's range and with odd offsets.
func TestAppendIsMarshal(t *testing.T) {
	for a := 0; a < 256; a++ {
		checkString(t, string([]byte{byte(a)}))
		for b := 0; b < 256; b += 7 {
			checkString(t, string([]byte{byte(a), byte(b)}))
		}
	}
	for _, s := range []string{"", "<a href=\"x\">&amp;</a>", "\u2028\u2029\u2027\u202a", "é\xffü\xc3", "\x00\x1f\x7f\u0080",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "tab\tnl\ncr\rbs\bff\f\\", string(utf8.RuneError), "日本語"} {
		checkString(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := r.IntN(12)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		checkString(t, string(b))
		checkFloat(t, math.Float64frombits(r.Uint64()), 64)
		checkFloat(t, float64(math.Float32frombits(r.Uint32())), 32)
		checkFloat(t, r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)), 64)
		checkFloat(t, r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)), 32)
		checkTime(t, time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)).In(time.FixedZone("z", r.IntN(200000)-100000)))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1e-6, 1e-7, 9.999999e-7, 1e21, 1e20, 999999999999999999999, 1e-9, 1e-10, 1e100,
		math.SmallestNonzeroFloat64, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN(), 123.456, -0.1, 5e-324} {
		checkFloat(t, f, 64)
		checkFloat(t, -f, 64)
		checkFloat(t, f, 32)
	}
	for _, tm := range []time.Time{{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 17, 0, 0, 1, time.FixedZone("s", 30)),
		time.Date(2026, 12, 2, 17, 0, 0, 0, time.FixedZone("h", 24*3600)), time.Date(2026, 12, 2, 17, 0, 0, 0, time.FixedZone("m", -(23*3600+59*60)))} {
		checkTime(t, tm)
	}
}

// FuzzAppendIsMarshal: AppendString, AppendFloat and AppendTime against
// json.Marshal on fuzzed strings, float bits and instants.
func FuzzAppendIsMarshal(f *testing.F) {
	f.Add("<&>\u2028\xff", uint64(0), int64(0), int32(0))
	f.Add("plain", math.Float64bits(1e21), int64(253402300800), int32(3600))
	f.Fuzz(func(t *testing.T, s string, bits uint64, sec int64, off int32) {
		checkString(t, s)
		checkFloat(t, math.Float64frombits(bits), 64)
		checkFloat(t, float64(math.Float32frombits(uint32(bits))), 32)
		checkTime(t, time.Unix(sec, int64(bits%1e9)).In(time.FixedZone("f", int(off))))
	})
}

// TestEncodeCopies: Encode hands back a copy of exactly what the encoder
// wrote, and nothing when the encoder does not take the value.
func TestEncodeCopies(t *testing.T) {
	enc := func(v any, b []byte) ([]byte, bool) {
		s, ok := v.(string)
		if !ok {
			return b, false
		}
		return AppendString(b, s), true
	}
	a, ok := Encode(enc, "a<")
	b, _ := Encode(enc, "b")
	if !ok || string(a) != `"a\u003c"` || string(b) != `"b"` || cap(a) != len(a) {
		t.Fatalf("Encode = %s (cap %d), %s", a, cap(a), b)
	}
	if got, ok := Encode(enc, 1); ok || got != nil {
		t.Fatalf("Encode of an int = %q, %v; want nil, false", got, ok)
	}
}
