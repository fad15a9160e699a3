// Package redact hides the password of a URL in what the runtime and its
// registries write in errors and logs.
package redact

import (
	"net/url"
	"strings"
)

// URL is raw with its password replaced by xxxxx, also when raw does
// not parse as a URL.
func URL(raw string) string {
	if u, err := url.Parse(raw); err == nil && (u.User != nil || !strings.Contains(raw, "@")) {
		return u.Redacted()
	}
	// Not a URL, or one whose userinfo url.Parse did not see (amqp//u:p@h
	// parses as a path): find user:password by hand.
	user, pass, ok := userinfo(raw)
	if !ok || pass == "" {
		return raw
	}
	return strings.Replace(raw, user+":"+pass+"@", user+":xxxxx@", 1)
}

// Password is the password in raw, found without parsing it as a URL.
func Password(raw string) string {
	_, pass, _ := userinfo(raw)
	return pass
}

// userinfo finds user:password in scheme://user:password@host/... The
// userinfo ends at the last '@', so a password holding '/' or '@' is found.
func userinfo(raw string) (user, pass string, ok bool) {
	// After scheme://, else after any //, else from the start: a URL with
	// a mistyped scheme still hides its password.
	rest := raw
	if i := strings.Index(raw, "://"); i >= 0 {
		rest = raw[i+3:]
	} else if i := strings.Index(raw, "//"); i >= 0 {
		rest = raw[i+2:]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", "", false
	}
	user, pass, _ = strings.Cut(rest[:at], ":")
	return user, pass, true
}
