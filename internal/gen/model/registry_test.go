package model

import (
	"strings"
	"testing"
	"time"
)

func TestRegistry(t *testing.T) {
	m, err := build(t, "version: 1\npackage: p\nregistry:\n  url: https://${REG_HOST}:8081\n  username_env: REG_USER\n  password_env: REG_PASS\n  timeout: 5s\n  lookup_only: true\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Registry
	if r == nil || r.GoName != "SchemaRegistry" || r.URL != "https://${REG_HOST}:8081" || r.UsernameEnv != "REG_USER" ||
		r.PasswordEnv != "REG_PASS" || r.Timeout != 5*time.Second || !r.LookupOnly || r.Directory != "" {
		t.Fatalf("registry: %+v", r)
	}
	m, err = build(t, "version: 1\npackage: p\nregistry: {directory: /var/lib/schemas}\n", nil)
	if err != nil || m.Registry.Directory != "/var/lib/schemas" {
		t.Fatalf("directory registry: %+v, %v", m.Registry, err)
	}
	if m, err := build(t, "version: 1\npackage: p\n", nil); err != nil || m.Registry != nil {
		t.Fatalf("no registry: %+v, %v", m.Registry, err)
	}
}

func TestRegistryErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"both", "registry: {directory: d, url: 'http://x'}\n",
			`acemq.yaml:3:31: registry: give directory (a directory registry) or url (a Confluent-compatible registry), not both`},
		{"neither", "registry: {timeout: 1s}\n",
			`acemq.yaml:3:1: registry: give directory (a directory registry shared by the services) or url (a Confluent-compatible registry)`},
		{"credentials in the URL", "registry: {url: 'https://svc:hunter2@reg:8081'}\n",
			`acemq.yaml:3:17: registry: url "https://svc:xxxxx@reg:8081" carries credentials: a manifest is committed; name environment variables with username_env and password_env (or token_env) instead`},
		{"not http", "registry: {url: 'reg:8081'}\n",
			`acemq.yaml:3:17: registry: url "reg:8081" must start with http:// or https:// (or an environment variable, ${NAME})`},
		{"token and basic", "registry: {url: 'http://x', token_env: T, username_env: U, password_env: P}\n",
			`registry: token_env (a bearer token) and username_env/password_env (basic auth) together; give one`},
		{"half basic", "registry: {url: 'http://x', username_env: U}\n",
			`acemq.yaml:3:43: registry: basic auth needs both username_env and password_env`},
		{"env on a directory", "registry: {directory: d, token_env: T}\n",
			`acemq.yaml:3:37: registry: token_env is for a url: registry, not a directory; remove it`},
		{"name clash", "registry: {directory: d}\nmessages:\n  SchemaRegistry: {type: a, schema: a.json}\n",
			`message "SchemaRegistry" becomes the Go name SchemaRegistry, which the registry: block takes; set go_name`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := build(t, "version: 1\npackage: p\n"+c.src, map[string]string{"a.json": object})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
}
