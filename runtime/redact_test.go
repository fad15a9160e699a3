package runtime

import (
	"strings"
	"testing"
)

// A password never shows, even in a URL that does not parse or whose
// scheme is mistyped.
func TestRedactMalformedURLs(t *testing.T) {
	const pass = "Pw-never-shown"
	for _, raw := range []string{
		"amqp://u:" + pass + "@localhost:5672/",
		"amqp://u:" + pass + "@localhost:notaport/",
		"amqp://u:" + pass + "@[::1/",
		"amqp//u:" + pass + "@localhost/",
		"amqp:/u:" + pass + "@localhost/",
		"u:" + pass + "@localhost",
		"http://u:" + pass + "@localhost/",
		"amqp://u:" + pass + "@host/%zz",
	} {
		if got := redactURL(raw); strings.Contains(got, pass) {
			t.Errorf("redactURL(%q) = %q", strings.ReplaceAll(raw, pass, "…"), got)
		}
		if got := passwordOf(raw); got != pass && !strings.HasSuffix(got, pass) {
			t.Errorf("passwordOf(%q) = %q, want the password (to scrub it from error texts)", strings.ReplaceAll(raw, pass, "…"), got)
		}
	}
}
