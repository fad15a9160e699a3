package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/redact"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
	"github.com/hamba/avro/v2/registry"
)

// HTTPConfig configures an HTTP registry.
type HTTPConfig struct {
	// URL is the registry's base URL, e.g. https://registry.internal:8081.
	// Credentials written in it (https://user:pass@host) are taken out of
	// it and used as Username and Password.
	URL string
	// Username and Password are sent with HTTP basic auth.
	Username, Password string
	// Token is sent as "Authorization: Bearer <token>" (instead of basic
	// auth).
	Token string
	// TLS configures https:// (nil: the system's roots).
	TLS *tls.Config
	// Timeout bounds each request, connecting included (default 10s).
	Timeout time.Duration
	// LookupOnly never registers: Register looks the schema up under its
	// subject (POST /subjects/{subject}) and an unregistered schema is an
	// error wrapping runtime.ErrSchemaNotFound. For registries where only CI
	// registers schemas.
	LookupOnly bool
}

// HTTP is a runtime.SchemaRegistry served by a Confluent-compatible schema
// registry, through hamba/avro's registry client. Register posts the schema
// to /subjects/{subject}/versions (which returns the existing id when the
// subject already has it) and Schema gets /schemas/ids/{id}; both answers
// are cached for good (an id never changes meaning in a Confluent
// registry), so a publisher and a consumer in their steady state make no
// HTTP call.
//
// Errors never contain the password or the token. A registry that does not
// answer (connection refused, a timeout, HTTP 5xx, 408, 429, and 401/403,
// which are not the message's fault either) is an error wrapping
// runtime.ErrRegistryUnavailable, which a consumer waits out; an id or subject the
// registry does not know (HTTP 404, Confluent error codes 40401, 40402,
// 40403) is one wrapping runtime.ErrSchemaNotFound. Safe for concurrent use.
type HTTP struct {
	client  *registry.Client
	base    string // the URL without credentials, for messages
	secrets []string
	lookup  bool

	ids   sync.Map // subject + "\x00" + fingerprint → id
	texts sync.Map // id → schema text
}

// NewHTTP returns the registry at cfg.URL. It makes no request.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("HTTP schema registry: the URL %q is not an http:// or https:// URL", redact.URL(cfg.URL))
	}
	if u.User != nil {
		if cfg.Username == "" {
			cfg.Username = u.User.Username()
		}
		if p, ok := u.User.Password(); ok && cfg.Password == "" {
			cfg.Password = p
		}
		u.User = nil
	}
	if cfg.Token != "" && (cfg.Username != "" || cfg.Password != "") {
		return nil, fmt.Errorf("HTTP schema registry %s: both a bearer token and basic auth credentials: give one", u)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	var transport http.RoundTripper = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     cfg.TLS,
		TLSHandshakeTimeout: timeout,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 4,
	}
	if cfg.Token != "" {
		transport = bearer{token: cfg.Token, next: transport}
	}
	opts := []registry.ClientFunc{registry.WithHTTPClient(&http.Client{Transport: transport, Timeout: timeout})}
	if cfg.Username != "" || cfg.Password != "" {
		opts = append(opts, registry.WithBasicAuth(cfg.Username, cfg.Password))
	}
	client, err := registry.NewClient(u.String(), opts...)
	if err != nil {
		return nil, fmt.Errorf("HTTP schema registry %s: %w", u, err)
	}
	r := &HTTP{client: client, base: strings.TrimSuffix(u.String(), "/"), lookup: cfg.LookupOnly}
	for _, s := range []string{cfg.Password, cfg.Token} {
		if s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	return r, nil
}

// bearer adds a bearer token to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

// URL is the registry's base URL, without credentials.
func (r *HTTP) URL() string { return r.base }

// Register returns schema's id under subject: registered (or, with
// LookupOnly, looked up) once, then from the cache. ctx bounds the request.
func (r *HTTP) Register(ctx context.Context, subject, schema string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	parsed, err := schemareg.Parse(schema)
	if err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	key := subject + "\x00" + schemareg.FingerprintText(parsed)
	if id, ok := r.ids.Load(key); ok {
		return id.(int), nil
	}
	var id int
	// hamba's client joins the subject into the path as it is: escaped
	// here, a subject holding '/', '?', '#' or a space reaches its own
	// endpoint.
	if r.lookup {
		id, _, err = r.client.IsRegistered(ctx, url.PathEscape(subject), schema)
	} else {
		id, _, err = r.client.CreateSchema(ctx, url.PathEscape(subject), schema)
	}
	if err != nil {
		verb := "register schema under subject"
		if r.lookup {
			verb = "look up schema under subject"
		}
		return 0, r.wrap(ctx, fmt.Sprintf("%s %q", verb, subject), err)
	}
	r.ids.Store(key, id)
	r.texts.LoadOrStore(id, schema)
	return id, nil
}

// Schema returns the schema with id (its canonical form as hamba parsed
// it), from the cache or GET /schemas/ids/{id}. ctx bounds the request.
func (r *HTTP) Schema(ctx context.Context, id int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("schema %d: %w", id, err)
	}
	if text, ok := r.texts.Load(id); ok {
		return text.(string), nil
	}
	s, err := r.client.GetSchema(ctx, id)
	if err != nil {
		return "", r.wrap(ctx, fmt.Sprintf("schema id %d", id), err)
	}
	text, _ := r.texts.LoadOrStore(id, s.String())
	return text.(string), nil
}

// Latest returns the id and text of the latest version under subject (GET
// /subjects/{subject}/versions/latest), uncached.
func (r *HTTP) Latest(ctx context.Context, subject string) (int, string, error) {
	info, err := r.client.GetLatestSchemaInfo(ctx, url.PathEscape(subject))
	if err != nil {
		return 0, "", r.wrap(ctx, fmt.Sprintf("latest schema of subject %q", subject), err)
	}
	return info.ID, info.Schema.String(), nil
}

// Compatible asks the registry whether schema is compatible with the
// versions under subject, by the subject's compatibility level (POST
// /compatibility/subjects/{subject}/versions), uncached.
func (r *HTTP) Compatible(ctx context.Context, subject, schema string) (bool, error) {
	ok, err := r.client.IsCompatible(ctx, url.PathEscape(subject), schema)
	if err != nil {
		return false, r.wrap(ctx, fmt.Sprintf("compatibility of a schema with subject %q", subject), err)
	}
	return ok, nil
}

// wrap classifies a client error and strips any secret from its text.
func (r *HTTP) wrap(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %w", what, cerr)
	}
	var kind error
	text := err.Error()
	var re registry.Error
	var ue *url.Error
	switch {
	case errors.As(err, &re):
		text = fmt.Sprintf("HTTP %d", re.StatusCode)
		if re.Code != 0 || re.Message != "" {
			text = fmt.Sprintf("HTTP %d, error code %d: %s", re.StatusCode, re.Code, re.Message)
		}
		switch {
		case re.StatusCode == http.StatusNotFound:
			kind = runtime.ErrSchemaNotFound
		case re.StatusCode >= 500, re.StatusCode == http.StatusRequestTimeout, re.StatusCode == http.StatusTooManyRequests,
			re.StatusCode == http.StatusUnauthorized, re.StatusCode == http.StatusForbidden:
			kind = runtime.ErrRegistryUnavailable
		}
	case errors.As(err, &ue):
		kind = runtime.ErrRegistryUnavailable
		text = ue.Err.Error()
	}
	text = r.redact(text)
	if kind != nil {
		return &registryError{text: fmt.Sprintf("%s: schema registry %s: %s", what, r.base, text), kind: kind}
	}
	return &registryError{text: fmt.Sprintf("%s: schema registry %s: %s", what, r.base, text)}
}

func (r *HTTP) redact(s string) string {
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, "xxxxx")
	}
	return s
}

// registryError is an HTTP registry's failure: its text, safe to log, and
// the sentinel it matches (runtime.ErrSchemaNotFound, runtime.ErrRegistryUnavailable or
// none). The client's own error is not kept, so no secret can leak through
// Unwrap.
type registryError struct {
	text string
	kind error
}

func (e *registryError) Error() string {
	if e.kind != nil {
		return e.text + " (" + e.kind.Error() + ")"
	}
	return e.text
}

func (e *registryError) Unwrap() error { return e.kind }
