package jsoncheck

import (
	"math/rand/v2"
	"testing"
)

// depthByteScan is DepthAtMost as it was written first: byte by byte,
// skipping the byte after each backslash inside a string. DepthAtMost
// must answer as it does for every input.
func depthByteScan(body []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth > limit {
				return false
			}
		case ']', '}':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return true
}

var depthCases = []string{
	``, `"`, `"\`, `"\"`, `"\\"`, `"\\\"[`, `"\\\\"[`, `["\"]"]`, `[[["a\\"]]]`,
	`{"a":"[[[[","b":[1,[2,[3]]]}`, `]`, `"a"]`, `"\\\\\\"]"`, `[{"k\\\"":"v\\\\"}]`,
	`"unterminated [[[[`, `"x" "y\\" [[`, `[\"]`,
}

func TestDepthAtMostIsTheByteScan(t *testing.T) {
	for _, c := range depthCases {
		for limit := 0; limit <= 4; limit++ {
			if got, want := DepthAtMost([]byte(c), limit), depthByteScan([]byte(c), limit); got != want {
				t.Errorf("DepthAtMost(%q, %d) = %v, the byte scan says %v", c, limit, got, want)
			}
		}
	}
	// Random bodies over the bytes that matter, where runs of backslashes
	// before quotes are common.
	alphabet := []byte(`"\\[]{}a`)
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200000; n++ {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		limit := r.IntN(4)
		if got, want := DepthAtMost(b, limit), depthByteScan(b, limit); got != want {
			t.Fatalf("DepthAtMost(%q, %d) = %v, the byte scan says %v", b, limit, got, want)
		}
	}
}

func FuzzDepthAtMost(f *testing.F) {
	for _, c := range depthCases {
		f.Add([]byte(c), 2)
	}
	f.Fuzz(func(t *testing.T, body []byte, limit int) {
		limit %= 40
		if got, want := DepthAtMost(body, limit), depthByteScan(body, limit); got != want {
			t.Fatalf("DepthAtMost(%q, %d) = %v, the byte scan says %v", body, limit, got, want)
		}
	})
}
