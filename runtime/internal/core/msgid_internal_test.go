package core

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestFirstSeenIsFormat: appendFirstSeen writes what time.Format writes with
// FirstSeenLayout, in UTC, for instants of every year 0–9999, zones other
// than UTC, the edges of a day and a second, and years Format writes
// otherwise.
func TestFirstSeenIsFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	zones := []*time.Location{time.UTC, time.FixedZone("x", -11*3600-1800), time.FixedZone("y", 14*3600)}
	check := func(tm time.Time) {
		t.Helper()
		want := tm.UTC().Format(FirstSeenLayout)
		if got := FormatTime(tm); got != want {
			t.Fatalf("FormatTime(%v) = %q, Format writes %q", tm, got, want)
		}
		if _, seen := NewIDAndSeen(tm); seen != want {
			t.Fatalf("NewIDAndSeen(%v) seen %q, Format writes %q", tm, seen, want)
		}
	}
	for range 200000 {
		sec := r.Int64N(253402300800+62135596800) - 62135596800 // 0000-01-01 to 9999-12-31
		check(time.Unix(sec, r.Int64N(1e9)).In(zones[r.IntN(len(zones))]))
	}
	for _, tm := range []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(2024, 2, 29, 12, 0, 0, 1e6, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(123456, 6, 1, 0, 0, 0, 0, time.UTC), {}, time.Now(),
	} {
		check(tm)
	}
}

// TestNewIDIsUUIDv7: an id is a UUIDv7 as uuid.NewV7 writes it (version 7,
// the RFC 4122 variant, lowercase text), its time the instant given, and
// every id greater than the one before it, also within a millisecond and
// when the clock goes back. The random part differs from id to id.
func TestNewIDIsUUIDv7(t *testing.T) {
	now := time.Now()
	prev := ""
	rnd := map[string]bool{}
	for i := range 5000 {
		at := now
		if i%100 == 99 {
			at = now.Add(-time.Second) // the clock went back
		}
		id, _ := NewIDAndSeen(at)
		if i%2 == 1 {
			id = NewID()
		}
		u, err := uuid.Parse(id)
		if err != nil || u.String() != id || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("id %q: %v, version %d, variant %v", id, err, u.Version(), u.Variant())
		}
		if ms := uuidMilli(t, id); ms < now.UnixMilli()-1000 || ms > time.Now().UnixMilli()+1000 {
			t.Fatalf("id %q: time %d ms, made at %d", id, ms, now.UnixMilli())
		}
		if id <= prev {
			t.Fatalf("id %q after %q: not greater", id, prev)
		}
		prev = id
		rnd[id[19:]] = true
	}
	if len(rnd) < 4990 {
		t.Fatalf("%d random parts of 5000", len(rnd))
	}
	id, _ := NewIDAndSeen(now)
	if want := now.UnixMilli(); uuidMilli(t, id) < want {
		t.Fatalf("id %q: %d ms, made at %d", id, uuidMilli(t, id), want)
	}
	if strings.ToLower(id) != id {
		t.Fatalf("id %q is not lowercase", id)
	}
}

func uuidMilli(t *testing.T, id string) int64 {
	t.Helper()
	u := uuid.MustParse(id)
	var ms int64
	for _, b := range u[:6] {
		ms = ms<<8 | int64(b)
	}
	return ms
}

// FuzzFirstSeen: appendFirstSeen is Format, for any instant.
func FuzzFirstSeen(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(1764763607), int64(999999999))
	f.Add(int64(253402300799), int64(5e8))
	f.Fuzz(func(t *testing.T, sec, nsec int64) {
		tm := time.Unix(sec, nsec)
		if got, want := FormatTime(tm), tm.UTC().Format(FirstSeenLayout); got != want {
			t.Fatalf("FormatTime(%d, %d) = %q, Format writes %q", sec, nsec, got, want)
		}
	})
}
