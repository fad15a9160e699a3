package ui

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseToken(t *testing.T) {
	for in, want := range map[string][2]string{
		"alice:0123456789abcdef":   {"alice", "0123456789abcdef"},
		"0123456789abcdef0123":     {DefaultTokenName, "0123456789abcdef0123"},
		"  bob:a:b:c:d:e:f:g:h:i ": {"bob", "a:b:c:d:e:f:g:h:i"},
	} {
		name, secret, err := ParseToken(in)
		if err != nil || name != want[0] || secret != want[1] {
			t.Errorf("ParseToken(%q) = %q, %q, %v", in, name, secret, err)
		}
	}
	if _, _, err := ParseToken("alice:short"); err == nil || err.Error() != "token of alice: 5 characters, want 16 or more (openssl rand -hex 16 makes one)" {
		t.Errorf("a short token: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	must(t, os.WriteFile(file, []byte("# ops\nalice:0123456789abcdef\n\nbob:fedcba9876543210\n"), 0o600))
	m, err := ReadTokenFile(file)
	if err != nil || len(m) != 2 || m["0123456789abcdef"] != "alice" || m["fedcba9876543210"] != "bob" {
		t.Errorf("ReadTokenFile: %v %v", m, err)
	}
	must(t, os.WriteFile(file, []byte("# none\n"), 0o600))
	if _, err := ReadTokenFile(file); err == nil || !strings.Contains(err.Error(), "no token in it") {
		t.Errorf("an empty token file: %v", err)
	}
}

// The guard and the action wrapper, without a broker: which requests an
// action runs for, and the headers every answer carries.
func TestActionGuard(t *testing.T) {
	s := &Server{auth: newAuth(map[string]string{"0123456789abcdef": "alice"}), hosts: map[string]bool{"127.0.0.1:8080": true},
		log: nil, cfg: Config{Scrub: func(s string) string { return s }}}
	s.log = newDiscardLogger()
	s.audit = &auditLog{}
	sess := &session{name: "alice", csrf: "c5rf", expires: time.Now().Add(time.Hour)}
	s.auth.byID["sid"] = sess
	ran := ""
	h := s.guard(s.action(func(w http.ResponseWriter, r *http.Request, who string) {
		ran = who
		writeJSON(w, 200, map[string]string{"who": who})
	}))
	for _, c := range []struct {
		name    string
		host    string
		headers map[string]string
		cookie  bool
		want    int
	}{
		{"no console header", "127.0.0.1:8080", nil, true, 403},
		{"another host", "evil.example", map[string]string{"X-Acemq": "1", "X-CSRF-Token": "c5rf"}, true, 421},
		{"not signed in", "127.0.0.1:8080", map[string]string{"X-Acemq": "1"}, false, 401},
		{"no CSRF token", "127.0.0.1:8080", map[string]string{"X-Acemq": "1"}, true, 403},
		{"a wrong CSRF token", "127.0.0.1:8080", map[string]string{"X-Acemq": "1", "X-CSRF-Token": "c5rg"}, true, 403},
		{"another origin", "127.0.0.1:8080", map[string]string{"X-Acemq": "1", "X-CSRF-Token": "c5rf", "Origin": "http://evil.example"}, true, 403},
		{"a wrong bearer", "127.0.0.1:8080", map[string]string{"X-Acemq": "1", "Authorization": "Bearer nope"}, false, 401},
		{"signed in", "127.0.0.1:8080", map[string]string{"X-Acemq": "1", "X-CSRF-Token": "c5rf", "Origin": "http://127.0.0.1:8080"}, true, 200},
		{"a bearer token", "127.0.0.1:8080", map[string]string{"X-Acemq": "1", "Authorization": "Bearer 0123456789abcdef"}, false, 200},
	} {
		ran = ""
		req := httptest.NewRequest("POST", "http://"+c.host+"/api/replay", strings.NewReader("{}"))
		req.Host = c.host
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		if c.cookie {
			req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "sid"})
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.want || (c.want == 200) != (ran == "alice") {
			t.Errorf("%s: %d (ran for %q), want %d: %s", c.name, w.Code, ran, c.want, w.Body)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || w.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", c.name, w.Header())
		}
	}
	// Every refused attempt is in the audit log, by nobody proven, with
	// where it came from and why it was refused.
	var refusals []string
	for _, e := range s.audit.last {
		refusals = append(refusals, e.Who+" "+e.Action+" | "+e.What+" | "+e.Result)
	}
	want := []string{
		"? replay | POST /api/replay from 192.0.2.1:1234 with the session of alice | refused: no X-Acemq: 1 header (a form on another site?)",
		"? replay | POST /api/replay from 192.0.2.1:1234 with the session of alice | refused: the request's Host \"evil.example\" is not the console's (DNS rebinding?)",
		"? replay | POST /api/replay from 192.0.2.1:1234 | refused: sign in with a token first",
		"? replay | POST /api/replay from 192.0.2.1:1234 with the session of alice | refused: the request's CSRF token is missing or wrong: reload the page",
		"? replay | POST /api/replay from 192.0.2.1:1234 with the session of alice | refused: the request's CSRF token is missing or wrong: reload the page",
		"? replay | POST /api/replay from 192.0.2.1:1234 (Origin http://evil.example) with the session of alice | refused: the request comes from another site (http://evil.example)",
		"? replay | POST /api/replay from 192.0.2.1:1234 | refused: the bearer token is not one of the console's",
	}
	if strings.Join(refusals, "\n") != strings.Join(want, "\n") {
		t.Errorf("the audit log of the refusals:\n%s\nwant\n%s", strings.Join(refusals, "\n"), strings.Join(want, "\n"))
	}
	// Read-only: no action runs, whatever is sent.
	s.auth = newAuth(nil)
	req := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/replay", nil)
	req.Header.Set("X-Acemq", "1")
	req.Header.Set("Authorization", "Bearer 0123456789abcdef")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 403 || !strings.Contains(w.Body.String(), "read-only") {
		t.Errorf("read-only: %d %s", w.Code, w.Body)
	}
}

// Every request, a look as much as an action, is served only for the
// console's own host names (DNS rebinding: a page of another site whose
// name resolves to 127.0.0.1 reads nothing), and only from the console's
// own page when the browser says where it comes from (a page of another
// site cannot make the console browse a queue, even blind).
func TestHostAndSite(t *testing.T) {
	s := &Server{auth: newAuth(nil), audit: &auditLog{}, log: newDiscardLogger(), cfg: Config{Scrub: func(s string) string { return s }}}
	h := s.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"dead": "letters"}) }))
	get := func(path, host, site string) int {
		req := httptest.NewRequest("GET", "http://"+host+path, nil)
		req.Host = host
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s (Host %s): headers %v", path, host, w.Header())
		}
		return w.Code
	}
	check := func(what string, hosts map[string]int) {
		t.Helper()
		for host, want := range hosts {
			for _, path := range []string{"/", "/api/messages", "/api/message", "/api/audit", "/api/session"} {
				if got := get(path, host, ""); got != want {
					t.Errorf("%s: GET %s with Host %s: %d, want %d", what, path, host, got, want)
				}
			}
		}
	}
	// A handler not yet serving a listener: the loopback names only.
	check("before Serve", map[string]int{"127.0.0.1:8080": 200, "localhost:9999": 200, "[::1]:8080": 200, "localhost": 200,
		"evil.example:8080": 421, "evil.example": 421, "127.0.0.1.evil.example:8080": 421, "10.0.0.1:8080": 421})
	// Serving 127.0.0.1:8080: that address and the loopback names on its port.
	s.hosts = map[string]bool{}
	s.listenHosts("127.0.0.1:8080")
	check("on 127.0.0.1:8080", map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200,
		"localhost:9999": 421, "evil.example:8080": 421, "evil.example": 421})
	// --allow-remote on every address with --host: the names given (any
	// case), on the listen port, or with their own port (a proxy's);
	// every other Host is still refused.
	s.cfg.Hosts = []string{"Console.Example", "proxy.example:443"}
	s.hosts = map[string]bool{}
	s.listenHosts("0.0.0.0:8080")
	check("--allow-remote --host", map[string]int{"console.example:8080": 200, "CONSOLE.example:8080": 200, "console.example": 200,
		"proxy.example:443": 200, "proxy.example:8080": 421, "localhost:8080": 200,
		"evil.example:8080": 421, "10.0.0.1:8080": 421, "console.example.evil.example:8080": 421, "console.example:9999": 421})
	// Before Serve, a --host name on any port.
	s.hosts = nil
	check("--host before Serve", map[string]int{"console.example:8080": 200, "proxy.example:9999": 200, "evil.example:8080": 421})
	s.cfg.Hosts = nil
	s.hosts = map[string]bool{}
	s.listenHosts("127.0.0.1:8080")
	for _, c := range []struct {
		path, site string
		want       int
	}{
		{"/api/message", "cross-site", 403},
		{"/api/message/raw", "same-site", 403},
		{"/api/groups", "same-origin", 200},
		{"/api/groups", "none", 200},
		{"/", "cross-site", 200}, // a link to the console
		{"/static/app.js", "cross-site", 200},
	} {
		if got := get(c.path, "127.0.0.1:8080", c.site); got != c.want {
			t.Errorf("GET %s with Sec-Fetch-Site %s: %d, want %d", c.path, c.site, got, c.want)
		}
	}
}

func newDiscardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
