package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/redact"
)

// Config describes a schema registry by configuration, as the
// manifest's registry: block does. Give Directory or URL. In Directory and
// URL, ${NAME} is replaced by the environment variable NAME (one that is
// unset is an error), so one manifest serves several environments;
// credentials are only ever read from the environment variables named.
type Config struct {
	// Directory is a Directory registry's directory (a relative path is
	// relative to the working directory of the running program).
	Directory string
	// URL is a Confluent-compatible registry's base URL (an HTTP
	// registry).
	URL string
	// UsernameEnv and PasswordEnv name the environment variables holding
	// basic auth credentials; TokenEnv the one holding a bearer token.
	UsernameEnv, PasswordEnv, TokenEnv string
	// Timeout bounds each HTTP request (default 10s).
	Timeout time.Duration
	// LookupOnly never registers schemas in the HTTP registry (see
	// HTTPConfig.LookupOnly).
	LookupOnly bool
}

// Open returns the registry cfg describes, opened now: a Directory
// (created when missing) or an HTTP registry (which makes no request yet).
func Open(cfg Config) (runtime.SchemaRegistry, error) {
	switch {
	case cfg.Directory != "" && cfg.URL != "":
		return nil, errors.New("schema registry: both a directory and a URL: give one")
	case cfg.Directory != "":
		dir, err := expandEnv(cfg.Directory)
		if err != nil {
			return nil, fmt.Errorf("schema registry directory %q: %w", cfg.Directory, err)
		}
		return NewDirectory(dir)
	case cfg.URL != "":
		u, err := expandEnv(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("schema registry URL %q: %w", redact.URL(cfg.URL), err)
		}
		hc := HTTPConfig{URL: u, Timeout: cfg.Timeout, LookupOnly: cfg.LookupOnly}
		for _, e := range []struct {
			name string
			to   *string
		}{{cfg.UsernameEnv, &hc.Username}, {cfg.PasswordEnv, &hc.Password}, {cfg.TokenEnv, &hc.Token}} {
			if e.name == "" {
				continue
			}
			if *e.to = os.Getenv(e.name); *e.to == "" {
				return nil, fmt.Errorf("schema registry %s: the environment variable %s is empty or unset", redact.URL(u), e.name)
			}
		}
		return NewHTTP(hc)
	}
	return nil, errors.New("schema registry: neither a directory nor a URL")
}

func expandEnv(s string) (string, error) {
	var missing []string
	out := os.Expand(s, func(name string) string {
		v, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("the environment variable %s is unset", missing[0])
	}
	return out, nil
}

// OpenLazy returns a runtime.SchemaRegistry that opens cfg on first use,
// for a package-level variable of generated code (which must not fail at
// init). A Consume whose Avro types use it opens it before subscribing, so
// a bad configuration fails the Consume; until it opens, Register and
// Schema return the opening error wrapped in
// runtime.ErrRegistryUnavailable (a consumer waits rather than parking) and
// try again on the next call.
func OpenLazy(cfg Config) runtime.SchemaRegistry {
	return &lazyRegistry{cfg: cfg}
}

type lazyRegistry struct {
	cfg Config
	mu  sync.Mutex
	reg runtime.SchemaRegistry
}

// OpenNow opens the registry ahead of its first use: a runtime.Consume
// whose Avro types use it calls it before subscribing.
func (l *lazyRegistry) OpenNow() error {
	_, err := l.get()
	return err
}

func (l *lazyRegistry) get() (runtime.SchemaRegistry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reg != nil {
		return l.reg, nil
	}
	reg, err := Open(l.cfg)
	if err != nil {
		return nil, err
	}
	l.reg = reg
	return reg, nil
}

func (l *lazyRegistry) Register(ctx context.Context, subject, schema string) (int, error) {
	reg, err := l.get()
	if err != nil {
		return 0, fmt.Errorf("%w: %w", runtime.ErrRegistryUnavailable, err)
	}
	return reg.Register(ctx, subject, schema)
}

func (l *lazyRegistry) Schema(ctx context.Context, id int) (string, error) {
	reg, err := l.get()
	if err != nil {
		return "", fmt.Errorf("%w: %w", runtime.ErrRegistryUnavailable, err)
	}
	return reg.Schema(ctx, id)
}
