package model

import (
	"net/url"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// registry resolves the registry: block: a directory or a URL, credentials
// only by environment variable name.
func (b *builder) registry() {
	mr := b.file.Registry
	if mr == nil {
		return
	}
	r := &Registry{GoName: "SchemaRegistry", VarName: "schemaRegistry"}
	if !b.ns.claim(r.GoName, "the registry: block", manifest.Pos{}) ||
		!b.ns.claim(r.VarName, "the registry: block (its variable)", manifest.Pos{}) {
		return
	}
	switch {
	case mr.Directory != nil && mr.URL != nil:
		b.errorf(mr.URL.Pos, "registry: give directory (a directory registry) or url (a Confluent-compatible registry), not both")
		return
	case mr.Directory == nil && mr.URL == nil:
		b.errorf(mr.Pos, "registry: give directory (a directory registry shared by the services) or url (a Confluent-compatible registry)")
		return
	case mr.Directory != nil:
		r.Directory = mr.Directory.Value
		for key, v := range map[string]*manifest.Str{"username_env": mr.UsernameEnv, "password_env": mr.PasswordEnv, "token_env": mr.TokenEnv, "timeout": mr.Timeout} {
			if v != nil {
				b.errorf(v.Pos, "registry: %s is for a url: registry, not a directory; remove it", key)
			}
		}
		if mr.LookupOnly != nil {
			b.errorf(mr.LookupOnly.Pos, "registry: lookup_only is for a url: registry, not a directory; remove it")
		}
	default:
		r.URL = mr.URL.Value
		b.registryURL(mr.URL)
	}
	if mr.TokenEnv != nil && (mr.UsernameEnv != nil || mr.PasswordEnv != nil) {
		b.errorf(mr.TokenEnv.Pos, "registry: token_env (a bearer token) and username_env/password_env (basic auth) together; give one")
	}
	if (mr.UsernameEnv == nil) != (mr.PasswordEnv == nil) && mr.URL != nil {
		at := mr.Pos
		if mr.UsernameEnv != nil {
			at = mr.UsernameEnv.Pos
		} else {
			at = mr.PasswordEnv.Pos
		}
		b.errorf(at, "registry: basic auth needs both username_env and password_env")
	}
	if mr.URL != nil {
		r.UsernameEnv, r.PasswordEnv, r.TokenEnv = value(mr.UsernameEnv), value(mr.PasswordEnv), value(mr.TokenEnv)
		if mr.Timeout != nil {
			if r.Timeout = b.duration("registry", "timeout", *mr.Timeout); r.Timeout <= 0 && mr.Timeout.Value != "" {
				b.errorf(mr.Timeout.Pos, "registry: timeout %s must be above zero", mr.Timeout.Value)
			}
		}
		if mr.LookupOnly != nil {
			r.LookupOnly = mr.LookupOnly.Value
		}
	}
	b.m.Registry = r
}

// registryURL checks a url: that is http(s) and carries no credentials.
func (b *builder) registryURL(s *manifest.Str) {
	raw := s.Value
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") && !strings.HasPrefix(raw, "${") {
		b.errorf(s.Pos, "registry: url %q must start with http:// or https:// (or an environment variable, ${NAME})", raw)
		return
	}
	rest := raw[strings.Index(raw, "//")+2:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.Contains(rest, "@") {
		u, _ := url.Parse(raw)
		shown := raw
		if u != nil {
			shown = u.Redacted()
		}
		b.errorf(s.Pos, "registry: url %q carries credentials: a manifest is committed; name environment variables with username_env and password_env (or token_env) instead", shown)
	}
}

func value(s *manifest.Str) string {
	if s == nil {
		return ""
	}
	return s.Value
}
