package jsoncheck

import (
	"math/rand/v2"
	"testing"
)

// The native uuid check says what the reference validator's says, on
// edge cases and on random strings made of the characters that matter.
func TestFormatUUIDIsTheReferences(t *testing.T) {
	formatsOnce.Do(loadFormats)
	ref := formats["uuid"]
	cases := []string{
		"", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", "6F1C2A8E-3B4D-4C5E-8F90-1A2B3C4D5E6F",
		"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f0",
		"6f1c2a8e3b4d-4c5e-8f90-1a2b3c4d5e6f-", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6g",
		"6f1c2a8e-3b4d-4c5e-8f901a2b3c4d5e6f-", "------------------------------------",
		"6f1c2a8é-3b4d-4c5e-8f90-1a2b3c4d5e6f", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6\u00ff",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "0123456789abcdefABCDEFgG-é\x00"
	for range 20000 {
		b := []byte(cases[1])
		for range r.IntN(3) + 1 {
			b[r.IntN(len(b))] = chars[r.IntN(len(chars))]
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := isUUID(s), ref.Validate(s) == nil; got != want {
			t.Errorf("uuid %q: native %v, reference %v", s, got, want)
		}
	}
}
