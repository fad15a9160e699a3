package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// RegistryConfig describes a schema registry by configuration, as the
// manifest's registry: block does. Give Directory or URL. In Directory and
// URL, ${NAME} is replaced by the environment variable NAME (one that is
// unset is an error), so one manifest serves several environments;
// credentials are only ever read from the environment variables named.
type RegistryConfig struct {
	// Directory is a DirectoryRegistry's directory (a relative path is
	// relative to the working directory of the running program).
	Directory string
	// URL is a Confluent-compatible registry's base URL (HTTPRegistry).
	URL string
	// UsernameEnv and PasswordEnv name the environment variables holding
	// basic auth credentials; TokenEnv the one holding a bearer token.
	UsernameEnv, PasswordEnv, TokenEnv string
	// Timeout bounds each HTTP request (default 10s).
	Timeout time.Duration
	// LookupOnly never registers schemas in the HTTP registry (see
	// HTTPRegistryConfig.LookupOnly).
	LookupOnly bool
}

// OpenRegistry returns the registry cfg describes.
func OpenRegistry(cfg RegistryConfig) (SchemaRegistry, error) {
	switch {
	case cfg.Directory != "" && cfg.URL != "":
		return nil, errors.New("schema registry: both a directory and a URL: give one")
	case cfg.Directory != "":
		dir, err := expandEnv(cfg.Directory)
		if err != nil {
			return nil, fmt.Errorf("schema registry directory %q: %w", cfg.Directory, err)
		}
		return NewDirectoryRegistry(dir)
	case cfg.URL != "":
		u, err := expandEnv(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("schema registry URL %q: %w", redactURL(cfg.URL), err)
		}
		hc := HTTPRegistryConfig{URL: u, Timeout: cfg.Timeout, LookupOnly: cfg.LookupOnly}
		for _, e := range []struct {
			name string
			to   *string
		}{{cfg.UsernameEnv, &hc.Username}, {cfg.PasswordEnv, &hc.Password}, {cfg.TokenEnv, &hc.Token}} {
			if e.name == "" {
				continue
			}
			if *e.to = os.Getenv(e.name); *e.to == "" {
				return nil, fmt.Errorf("schema registry %s: the environment variable %s is empty or unset", redactURL(u), e.name)
			}
		}
		return NewHTTPRegistry(hc)
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

// ConfiguredRegistry returns a SchemaRegistry that opens cfg on first use,
// for a package-level variable of generated code (which must not fail at
// init). A Consume whose Avro types use it opens it before subscribing, so
// a bad configuration fails the Consume; until it opens, Register and
// Schema return the opening error wrapped in ErrRegistryUnavailable (a
// consumer waits rather than parking) and try again on the next call.
func ConfiguredRegistry(cfg RegistryConfig) SchemaRegistry {
	return &lazyRegistry{cfg: cfg}
}

type lazyRegistry struct {
	cfg RegistryConfig
	mu  sync.Mutex
	reg SchemaRegistry
}

// opener is a registry that can be opened ahead of its first use.
type opener interface{ open() error }

func (l *lazyRegistry) open() error {
	_, err := l.get()
	return err
}

func (l *lazyRegistry) get() (SchemaRegistry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reg != nil {
		return l.reg, nil
	}
	reg, err := OpenRegistry(l.cfg)
	if err != nil {
		return nil, err
	}
	l.reg = reg
	return reg, nil
}

func (l *lazyRegistry) Register(ctx context.Context, subject, schema string) (int, error) {
	reg, err := l.get()
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrRegistryUnavailable, err)
	}
	return reg.Register(ctx, subject, schema)
}

func (l *lazyRegistry) Schema(ctx context.Context, id int) (string, error) {
	reg, err := l.get()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrRegistryUnavailable, err)
	}
	return reg.Schema(ctx, id)
}
