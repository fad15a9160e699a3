package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// Markers around the fuzzed password, so that a leak is told from a
// password that happens to equal a word of the error text; a leak of a
// fragment at either end of the password shows as a marker.
const (
	pwHead = "Hq7"
	pwTail = "7qH"
)

// leakForms are the ways an error text may spell s: as it is, quoted as
// %q and %+q do (without the quotes), and percent-encoded as in a URL.
func leakForms(s string) []string {
	forms := []string{s}
	for _, q := range []string{strconv.Quote(s), strconv.QuoteToASCII(s)} {
		forms = append(forms, q[1:len(q)-1])
	}
	forms = append(forms, url.PathEscape(s), url.QueryEscape(s))
	if u := url.UserPassword("u", s).String(); strings.HasPrefix(u, "u:") {
		forms = append(forms, u[2:])
	}
	return forms
}

// leaked is the spelling of the password that text shows, if any: one of
// leakForms, or a marker (a fragment from either end).
func leaked(text, secret string) (string, bool) {
	for _, form := range leakForms(secret) {
		if strings.Contains(text, form) {
			return form, true
		}
	}
	for _, m := range []string{pwHead, pwTail} {
		if strings.Contains(text, m) {
			return m, true
		}
	}
	return "", false
}

// FuzzDialErrorRedaction: whatever the password, no error Dial returns and
// no line it logs shows it, raw or escaped: a URL that does not parse
// (url.Parse quotes the URL with %q), a port where nothing listens, a login
// the broker refuses, a TLS handshake that fails. Its seeds run in every go
// test; make fuzz runs it for a minute. The broker cases are skipped under
// -short.
func FuzzDialErrorRedaction(f *testing.F) {
	for _, seed := range []string{
		"se\"cret-pw", `se\"cret-pw`, "se\\cret-pw", "se\tcret-pw", "plain-secret",
		"se/cret", "se?cret", "se#cret", "se%cret", "se%22cret", "se@cret", "se:cret",
		"se\ncret", "se\x00cret", "se\xffcret", "sé☃cret", "se cret", "se,cret", "",
	} {
		f.Add(seed)
	}
	var broker *url.URL
	if !testing.Short() {
		u, err := url.Parse(brokertest.Require(f))
		if err != nil {
			f.Fatal(err)
		}
		broker = u
	}
	refused := freePort(f)
	f.Fuzz(func(t *testing.T, pass string) {
		if strings.Contains(pass, "://") {
			// A comma before a scheme:// starts another URL: such a
			// password is two addresses by the URL list's rule.
			t.Skip("a password holding a URL separator")
		}
		secret := pwHead + pass + pwTail
		host := func(hostport string) string { return "guest:" + secret + "@" + hostport }
		urls := map[string]string{
			"bad port":           "amqp://" + host("127.0.0.1:notaport") + "/",
			"bad host":           "amqp://" + host("[::1") + "/",
			"bad scheme":         "http://" + host("127.0.0.1") + "/",
			"no scheme":          "amqp//" + host("127.0.0.1") + "/",
			"bad escape":         "amqp://" + host("127.0.0.1") + "/%zz",
			"connection refused": "amqp://" + host(refused) + "/",
		}
		if broker != nil {
			vhost := strings.TrimPrefix(broker.EscapedPath(), "/")
			urls["auth failure"] = "amqp://" + host(broker.Host) + "/" + vhost
			urls["TLS failure"] = "amqps://" + host(broker.Host) + "/" + vhost
		}
		for name, u := range urls {
			var logs bytes.Buffer
			// A refused port is tried again until ctx ends: a short ctx. A
			// refused login or TLS handshake ends the Dial at once, however
			// long the broker takes on a loaded machine: a ctx that does not
			// cut it short.
			timeout := 150 * time.Millisecond
			if name == "auth failure" || name == "TLS failure" {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			c, err := runtime.Dial(ctx, u, runtime.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
				runtime.WithReconnectBackoff(50*time.Millisecond, 100*time.Millisecond))
			cancel()
			if err == nil {
				closeConn(c)
				t.Errorf("%s: Dial succeeded", name)
				continue
			}
			// A password that parses reaches the failure the case is for.
			if !errors.Is(err, runtime.ErrInvalidURL) {
				switch name {
				case "auth failure":
					if !errors.Is(err, runtime.ErrAuth) {
						t.Errorf("%s: %v, want ErrAuth", name, err)
					}
				case "TLS failure":
					if !strings.Contains(err.Error(), "tls:") {
						t.Errorf("%s: %v, want a TLS error", name, err)
					}
				case "connection refused":
					if !errors.Is(err, syscall.ECONNREFUSED) {
						t.Errorf("%s: %v, want ECONNREFUSED", name, err)
					}
				}
			}
			for what, text := range map[string]string{"the error": err.Error(), "the log": logs.String()} {
				if form, ok := leaked(text, secret); ok {
					t.Errorf("%s: the password (as %q) shows in %s: %q", name, form, what, text)
				}
			}
		}
	})
}
