package ui

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultTokenName is the name the audit log gives a token given alone.
const DefaultTokenName = "operator"

// ParseToken reads a --token: NAME:SECRET, or SECRET alone (named
// DefaultTokenName).
func ParseToken(s string) (name, secret string, err error) {
	name, secret = DefaultTokenName, strings.TrimSpace(s)
	if n, sec, ok := strings.Cut(secret, ":"); ok && n != "" && !strings.ContainsAny(n, " \t") {
		name, secret = n, sec
	}
	if len(secret) < 16 {
		return "", "", fmt.Errorf("token of %s: %d characters, want 16 or more (openssl rand -hex 16 makes one)", name, len(secret))
	}
	return name, secret, nil
}

// ReadTokenFile reads a --token-file: one token a line, NAME:SECRET or
// SECRET; blank lines and lines starting with # are skipped.
func ReadTokenFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, secret, err := ParseToken(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out[secret] = name
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no token in it", path)
	}
	return out, nil
}

const sessionCookie = "acemq_session"

// sessionLife is how long a sign-in lasts.
const sessionLife = 12 * time.Hour

type session struct {
	name    string
	csrf    string
	expires time.Time
}

// auth holds the tokens and the signed-in sessions.
type auth struct {
	tokens map[string]string // secret → name
	mu     sync.Mutex
	byID   map[string]*session
}

func newAuth(tokens map[string]string) *auth {
	return &auth{tokens: tokens, byID: map[string]*session{}}
}

func (a *auth) readOnly() bool { return len(a.tokens) == 0 }

// check is the name of secret's holder; every token is compared, in
// constant time.
func (a *auth) check(secret string) (string, bool) {
	name, found := "", false
	for sec, n := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(sec), []byte(secret)) == 1 {
			name, found = n, true
		}
	}
	return name, found
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (a *auth) session(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.byID[c.Value]
	if s == nil || time.Now().After(s.expires) {
		delete(a.byID, c.Value)
		return nil
	}
	return s
}

// who is the name of the token that allows r's action, or why none does:
// a bearer token (a script: no cookie, so no CSRF to fear), or a session
// with its CSRF token in X-CSRF-Token and, when the browser says where
// the request comes from, this console's own origin.
func (a *auth) who(r *http.Request) (string, string) {
	if a.readOnly() {
		return "", "the console is read-only: start it with --token or --token-file to allow actions"
	}
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		if name, ok := a.check(strings.TrimPrefix(h, "Bearer ")); ok {
			return name, ""
		}
		return "", "the bearer token is not one of the console's"
	}
	s := a.session(r)
	if s == nil {
		return "", "sign in with a token first"
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-CSRF-Token")), []byte(s.csrf)) != 1 {
		return "", "the request's CSRF token is missing or wrong: reload the page"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return "", "the request comes from another site (" + o + ")"
		}
	}
	return s.name, ""
}

// action wraps a handler that changes something: it runs only for a
// token's holder (whose name it gets).
func (s *Server) action(h func(w http.ResponseWriter, r *http.Request, who string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who, why := s.auth.who(r)
		if why != "" {
			s.refused(r, why)
			status := http.StatusUnauthorized
			if s.auth.readOnly() || strings.Contains(why, "CSRF") || strings.Contains(why, "another site") {
				status = http.StatusForbidden
			}
			writeError(w, status, why)
			return
		}
		h(w, r, who)
	}
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"read_only": s.auth.readOnly(), "signed_in": false, "manifest": s.cfg.File,
		"broker": s.scrub(s.conn.Address()), "allowed": s.allowed, "audit_file": s.audit.path}
	if sess := s.auth.session(r); sess != nil {
		out["signed_in"], out["name"], out["csrf"] = true, sess.name, sess.csrf
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if s.auth.readOnly() {
		s.refused(r, "the console is read-only")
		writeError(w, http.StatusForbidden, "the console is read-only: start it with --token or --token-file to allow actions")
		return
	}
	var req struct {
		Token string `json:"token"`
	}
	if err := readJSON(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	name, ok := s.auth.check(req.Token)
	if !ok {
		time.Sleep(500 * time.Millisecond) // no fast guessing
		s.refused(r, "not a token of the console")
		writeError(w, http.StatusUnauthorized, "not a token of this console")
		return
	}
	id := randomHex(32)
	sess := &session{name: name, csrf: randomHex(32), expires: time.Now().Add(sessionLife)}
	s.auth.mu.Lock()
	s.auth.byID[id] = sess
	s.auth.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Expires: sess.expires, Secure: r.TLS != nil})
	s.audit.write(auditEntry{Who: name, Action: "sign-in", Result: "signed in"})
	writeJSON(w, http.StatusOK, map[string]any{"signed_in": true, "name": name, "csrf": sess.csrf})
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.auth.mu.Lock()
		delete(s.auth.byID, c.Value)
		s.auth.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]any{"signed_in": false})
}

// actionOf is the audit log's name of the action a request asks for, ""
// when it asks for none.
func actionOf(r *http.Request) string {
	if r.Method != http.MethodPost {
		return ""
	}
	switch p := r.URL.Path; {
	case p == "/api/replay", p == "/api/discard", p == "/api/edit":
		return strings.TrimPrefix(p, "/api/")
	case p == "/api/login":
		return "sign-in"
	case strings.HasPrefix(p, "/api/jobs/") && strings.HasSuffix(p, "/cancel"):
		return "cancel"
	}
	return ""
}

// refused writes a refused attempt at an action to the audit log: who
// is "?" (a refused request proves no token), what says where it came
// from and, when it carries a session's cookie, whose.
func (s *Server) refused(r *http.Request, why string) {
	action := actionOf(r)
	if action == "" || s.audit == nil {
		return
	}
	what := r.Method + " " + r.URL.Path + " from " + r.RemoteAddr
	if o := r.Header.Get("Origin"); o != "" {
		if len(o) > 100 {
			o = o[:100] + "…"
		}
		what += " (Origin " + o + ")"
	}
	if s.auth != nil {
		if sess := s.auth.session(r); sess != nil {
			what += " with the session of " + sess.name
		}
	}
	s.audit.write(auditEntry{Who: "?", Action: action, What: s.scrub(what), Result: "refused: " + s.scrub(why)})
}
