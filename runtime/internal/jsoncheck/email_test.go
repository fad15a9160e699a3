package jsoncheck

import (
	"math/rand/v2"
	"strings"
	"testing"
)

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
	fastIsReference(t, "email", emailFast, emailCases(), "addresses")
}

func FuzzEmailFast(f *testing.F) {
	fuzzFastIsReference(f, "email", emailFast, emailCases())
}
