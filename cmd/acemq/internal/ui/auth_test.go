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

func newDiscardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
