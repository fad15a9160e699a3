package jsoncheck

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func formatReference(t testing.TB, name string) func(string) bool {
	formatsOnce.Do(loadFormats)
	ref := formats[name]
	if ref == nil {
		t.Fatalf("the reference has no %s format", name)
	}
	return func(s string) bool { return ref.Validate(s) == nil }
}

// emailCases are producers' addresses, the library's corners, and random
// changes of them.
func emailCases() []string {
	long := strings.Repeat("a", 63)
	cases := []string{
		"", "@", "a@b", "user@example.com", "first.last+tag@sub.example.co.uk", "@example.com", "a@", "a@.",
		"a@example.com.", "a@example..com", ".a@example.com", "a.@example.com", "a..b@example.com", "a@-example.com",
		"a@example-.com", "a@ex_ample.com", "a@exa mple.com", "é@example.com", "a@é.com", "a@b@c.com", "\"a b\"@example.com",
		"\"a\\b\"@example.com", "a@[127.0.0.1]", "a@[IPv6:::1]", "a@[300.0.0.1]", "!#$%&'*+-/=?^_`{|}~@example.com",
		"a\"b@example.com", "a(b)@example.com", "a@" + long + ".com", "a@" + long + "a.com", strings.Repeat("a", 64) + "@b.c",
		strings.Repeat("a", 65) + "@b.c", "a@" + strings.Repeat(long+".", 4) + "com", "a@" + strings.Repeat("b.", 126) + "c",
		"a@" + strings.Repeat("b.", 125) + "cd", strings.Repeat("a", 60) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63),
		"a\x00@example.com", "a@exam\xffple.com", "\xff@example.com",
	}
	r := rand.New(rand.NewPCG(5, 6))
	const chars = "aZ0-._@+\"[]: é\x00\xff!~"
	for range 40000 {
		b := []byte(cases[3+r.IntN(3)])
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

// emailFast decides an address only as the reference does.
func TestEmailFastIsTheReferences(t *testing.T) {
	ref := formatReference(t, "email")
	f := Format("email")
	sure := 0
	cases := emailCases()
	for _, s := range cases {
		want := ref(s)
		if got := f(s); got != want {
			t.Errorf("email %q: Format %v, reference %v", s, got, want)
		}
		if ok, isSure := emailFast(s); isSure {
			sure++
			if ok != want {
				t.Errorf("email %q: the fast path says %v, the reference %v", s, ok, want)
			}
		}
	}
	if sure < len(cases)/2 {
		t.Errorf("the fast path decided %d of %d addresses, want most", sure, len(cases))
	}
}

func FuzzEmailFast(f *testing.F) {
	for _, s := range emailCases()[:400] {
		f.Add(s)
	}
	ref := formatReference(f, "email")
	f.Fuzz(func(t *testing.T, s string) {
		if ok, sure := emailFast(s); sure && ok != ref(s) {
			t.Errorf("email %q: the fast path says %v, the reference %v", s, ok, !ok)
		}
	})
}
