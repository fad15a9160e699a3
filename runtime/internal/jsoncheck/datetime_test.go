package jsoncheck

import (
	"math/rand/v2"
	"testing"
)

// dateTimeCases are producers' texts, every month and day of leap and
// common years, and random changes of them.
func dateTimeCases() []string {
	cases := []string{
		"", "2026-11-30T06:00:00Z", "2026-11-30t06:00:00z", "2026-11-30T06:00:00.123+01:00",
		"2026-11-30T06:00:00.123456789Z", "2026-11-30T06:00:00.Z", "2026-11-30T06:00:00+24:00",
		"2026-11-30T23:59:60Z", "2026-11-30T22:59:60-01:00", "2026-11-30T00:59:60+01:00", "2026-11-30T06:00:60Z",
		"2026-11-30T24:00:00Z", "2026-11-30T06:60:00Z", "2026-11-30 06:00:00Z", "2026-02-29T00:00:00Z",
		"2024-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "0000-02-29T00:00:00Z",
		"2026-00-10T00:00:00Z", "2026-13-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-32T00:00:00Z",
		"+026-11-30T06:00:00Z", "2026-+1-30T06:00:00Z", "2026-11-+3T06:00:00Z", "2026-11-30T+6:00:00Z",
		"2026-11-30T-0:00:00Z", "2026-11-30T06:00:00+-1:00", "2026-11-30T06:00:00+01:+0", "2026-11-30T06:00:00+0:100",
		"2026-11-30T06:00:00+01:00x", "2026-11-30T06:00:00+0100", "2026-11-30T06:00:00 01:00", "2026-11-30T06:00:00ZZ",
		"2026-11-30T06:00:00.1é", "2026-11-30T06:00:00.١Z", "２026-11-30T06:00:00Z", "2026-11-30T06:00:0",
	}
	for _, y := range []string{"2024", "2026", "2000", "1900", "0000", "9999"} {
		for m := 0; m <= 13; m++ {
			for d := 0; d <= 32; d++ {
				cases = append(cases, y+"-"+two(m)+"-"+two(d)+"T12:00:00Z")
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	const chars = "0123456789-:.+tTzZ é\x00"
	for range 40000 {
		b := []byte(cases[1+r.IntN(5)])
		for range r.IntN(3) + 1 {
			b[r.IntN(len(b))] = chars[r.IntN(len(chars))]
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b))]
		}
		cases = append(cases, string(b))
	}
	return cases
}

func two(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// dateTimeFast decides a text only as the reference does.
func TestDateTimeFastIsTheReferences(t *testing.T) {
	fastIsReference(t, "date-time", dateTimeFast, dateTimeCases(), "texts")
}

func FuzzDateTimeFast(f *testing.F) {
	fuzzFastIsReference(f, "date-time", dateTimeFast, dateTimeCases())
}
