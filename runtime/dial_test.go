package runtime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestParseAddresses(t *testing.T) {
	cases := []struct {
		raw   string
		extra []string
		want  []string // redacted
	}{
		{"amqp://u:p@a:5672/", nil, []string{"amqp://u:xxxxx@a:5672/"}},
		{"amqp://u:p@a/, amqps://u:p@b/,AMQP://c/", nil, []string{"amqp://u:xxxxx@a/", "amqps://u:xxxxx@b/", "amqp://c/"}},
		// A comma inside a password is not a separator.
		{"amqp://u:p,q@a/,amqp://u:r@b/", nil, []string{"amqp://u:xxxxx@a/", "amqp://u:xxxxx@b/"}},
		{"", []string{"amqp://a/", " amqp://b/ "}, []string{"amqp://a/", "amqp://b/"}},
		{"amqp://a/", []string{"amqp://b/"}, []string{"amqp://a/", "amqp://b/"}},
	}
	for _, tc := range cases {
		addrs, err := parseAddresses(tc.raw, tc.extra)
		if err != nil {
			t.Errorf("parseAddresses(%q, %q): %v", tc.raw, tc.extra, err)
			continue
		}
		var got []string
		for _, a := range addrs {
			got = append(got, a.redacted)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parseAddresses(%q, %q) = %q, want %q", tc.raw, tc.extra, got, tc.want)
		}
	}
	if addrs, _ := parseAddresses("amqp://u:p,q@a/", nil); len(addrs) != 1 || addrs[0].secret != "p,q" {
		t.Errorf("password with a comma: %+v", addrs)
	}
	for _, bad := range []string{"", "  ", "http://a/", "amqp://a/,http://b/", "amqp://u:p@a:port/"} {
		if _, err := parseAddresses(bad, nil); !errors.Is(err, ErrInvalidURL) {
			t.Errorf("parseAddresses(%q) = %v, want ErrInvalidURL", bad, err)
		}
	}
}

func TestRedactURLThatDoesNotParse(t *testing.T) {
	for raw, want := range map[string]string{
		"amqp://guest:s3cr3t@host:port/":  "amqp://guest:xxxxx@host:port/",
		"amqp://guest:s/cr@t@host:bad/vh": "amqp://guest:xxxxx@host:bad/vh",
		"amqp://host:bad/":                "amqp://host:bad/",
		"not a url at all %zz":            "not a url at all %zz",
	} {
		if got := redactURL(raw); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestDialErrorScrubs(t *testing.T) {
	raw := "amqp://guest:guest@127.0.0.1:port/"
	e := &DialError{Address: redactURL(raw), Kind: ErrInvalidURL, Err: fmt.Errorf("parse %q: invalid port; password guest", raw),
		secrets: []address{{raw: raw, secret: "guest"}}}
	got := e.Error()
	if strings.Contains(got, ":guest@") || strings.Contains(got, "password guest") {
		t.Errorf("DialError shows the password: %s", got)
	}
	// The user name of the redacted URL survives scrubbing a password equal
	// to it.
	if !strings.Contains(got, `"amqp://guest:xxxxx@127.0.0.1:port/"`) {
		t.Errorf("DialError = %s; want the URL redacted in place", got)
	}
}

// A password with a quote, a backslash or a tab: url.Parse quotes the URL
// with %q in its error, escaping them; and one with a '/' or '#' makes
// url.Parse quote a piece of the URL. Neither spelling shows.
func TestDialErrorScrubsQuotedPassword(t *testing.T) {
	for _, pass := range []string{`se"cret-pw`, `se\cret-pw`, "se\tcret-pw", "se/cret-pw", "se\t#cret-pw", "sé\xffcret-pw"} {
		raw := "amqp://guest:" + pass + "@127.0.0.1:notaport/"
		_, err := parseAddresses(raw, nil)
		if err == nil {
			t.Fatalf("%q parsed", raw)
		}
		got := err.Error()
		q := strconv.Quote(pass)
		for _, form := range []string{pass, q[1 : len(q)-1], "cret-pw"} {
			if strings.Contains(got, form) {
				t.Errorf("password %q shows (as %q) in %s", pass, form, got)
			}
		}
	}
}
