package registry

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
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
	// MaxResponseBytes bounds the body of each response the registry
	// sends (default DefaultMaxResponseBytes, 4 MiB): a longer one is an
	// error wrapping a *ResponseTooLargeError and
	// runtime.ErrRegistryUnavailable, read no further than the limit.
	MaxResponseBytes int64
	// LookupOnly never registers: Register looks the schema up under its
	// subject (POST /subjects/{subject}) and an unregistered schema is an
	// error wrapping runtime.ErrSchemaNotFound. For registries where only CI
	// registers schemas.
	LookupOnly bool
}

// DefaultMaxResponseBytes is HTTPConfig.MaxResponseBytes's default, 4 MiB:
// a schema, or a registry's error, is a few KiB.
const DefaultMaxResponseBytes = 4 << 20

// HTTP is a runtime.SchemaRegistry served by a Confluent-compatible schema
// registry, through hamba/avro's registry client. Register posts the schema
// to /subjects/{subject}/versions (which returns the existing id when the
// subject already has it) and Schema gets /schemas/ids/{id}; both answers
// are cached for good (an id never changes meaning in a Confluent
// registry), so a publisher and a consumer in their steady state make no
// HTTP call.
//
// Credentials (basic auth or the token) are sent only to the configured
// URL's scheme, host and port: a redirect elsewhere is followed without
// them (docs/codecs.md). Each response's body is read up to
// MaxResponseBytes.
//
// Errors never contain the password or the token. A registry that does not
// answer (connection refused, a timeout, HTTP 5xx, 408, 429, and 401/403,
// which are not the message's fault either) or answers more than
// MaxResponseBytes is an error wrapping runtime.ErrRegistryUnavailable,
// which a consumer waits out; an id or subject the registry does not know
// (HTTP 404, Confluent error codes 40401, 40402, 40403) is one wrapping
// runtime.ErrSchemaNotFound. Safe for concurrent use.
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
	limit := cfg.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	g := &guard{origin: origin(u), limit: limit, next: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     cfg.TLS,
		TLSHandshakeTimeout: timeout,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 4,
	}}
	switch {
	case cfg.Token != "":
		g.auth = "Bearer " + cfg.Token
	case cfg.Username != "" || cfg.Password != "":
		// Not hamba's WithBasicAuth: it sets the header on the request,
		// which net/http copies onto a redirect to any port of the same
		// host name and to its subdomains.
		g.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.Username+":"+cfg.Password))
	}
	client, err := registry.NewClient(u.String(), registry.WithHTTPClient(&http.Client{Transport: g, Timeout: timeout}))
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

// guard is the registry client's transport: it puts the credentials on
// the requests to the registry's own origin only (net/http's client, on a
// redirect, copies no Authorization header the request did not have), and
// caps each response's body at limit. It tells the call's tracker what it
// withheld or cut.
type guard struct {
	origin string // scheme://host:port of the configured URL
	auth   string // the Authorization header's value, "" for none
	limit  int64
	next   http.RoundTripper
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*call)
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	if g.auth != "" {
		if to := origin(req.URL); to == g.origin {
			req.Header.Set("Authorization", g.auth)
		} else if c != nil {
			c.set(func() { c.withheld = to })
		}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	where := (&url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: req.URL.Path}).String()
	if resp.ContentLength > g.limit {
		_ = resp.Body.Close()
		return nil, c.tooLong(where, g.limit)
	}
	resp.Body = &cappedBody{body: resp.Body, left: g.limit, url: where, limit: g.limit, call: c}
	return resp, nil
}

// origin is u's scheme, host name and port (the scheme's default when
// none), lower case: the requests whose origin is the configured URL's get
// the credentials.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// cappedBody reads a response's body up to limit bytes; past it, Read
// fails with a *ResponseTooLargeError (and the transport, with the body
// unread, drops the connection).
type cappedBody struct {
	body  io.ReadCloser
	left  int64
	url   string
	limit int64
	call  *call
	err   error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, err
	}
	n, b.left = int(b.left), 0
	b.err = b.call.tooLong(b.url, b.limit)
	return n, b.err
}

func (b *cappedBody) Close() error { return b.body.Close() }

// ResponseTooLargeError is a registry's response whose body is longer than
// HTTPConfig.MaxResponseBytes. An HTTP registry's error wraps it (find it
// with errors.As) together with runtime.ErrRegistryUnavailable: the
// registry misbehaves, the message is not at fault.
type ResponseTooLargeError struct {
	// URL is the request's URL, without credentials or query.
	URL string
	// Limit is the MaxResponseBytes in force.
	Limit int64
}

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("the response to %s is longer than the limit of %d bytes (HTTPConfig.MaxResponseBytes)", e.URL, e.Limit)
}

// call tracks one client call (a request and its redirects) for wrap: a
// credential withheld from another host, a response too large. Its
// requests run one after the other on the caller's goroutine; the mutex
// keeps that an assumption nobody has to check.
type call struct {
	mu       sync.Mutex
	withheld string // the origin a redirect led to, without the credentials
	tooLarge *ResponseTooLargeError
}

type callKey struct{}

// track returns ctx carrying a new call's tracker.
func track(ctx context.Context) (context.Context, *call) {
	c := &call{}
	return context.WithValue(ctx, callKey{}, c), c
}

func (c *call) set(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// tooLong returns the error for a response to url past limit, noting it
// (c may be nil: a request made without a tracker).
func (c *call) tooLong(url string, limit int64) *ResponseTooLargeError {
	err := &ResponseTooLargeError{URL: url, Limit: limit}
	if c != nil {
		c.set(func() { c.tooLarge = err })
	}
	return err
}

// state is what the call's requests met.
func (c *call) state() (withheld string, tooLarge *ResponseTooLargeError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.withheld, c.tooLarge
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
	tctx, c := track(ctx)
	// hamba's client joins the subject into the path as it is: escaped
	// here, a subject holding '/', '?', '#' or a space reaches its own
	// endpoint.
	if r.lookup {
		id, _, err = r.client.IsRegistered(tctx, url.PathEscape(subject), schema)
	} else {
		id, _, err = r.client.CreateSchema(tctx, url.PathEscape(subject), schema)
	}
	if err != nil {
		verb := "register schema under subject"
		if r.lookup {
			verb = "look up schema under subject"
		}
		return 0, r.wrap(ctx, c, fmt.Sprintf("%s %q", verb, subject), err)
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
	tctx, c := track(ctx)
	s, err := r.client.GetSchema(tctx, id)
	if err != nil {
		return "", r.wrap(ctx, c, fmt.Sprintf("schema id %d", id), err)
	}
	text, _ := r.texts.LoadOrStore(id, s.String())
	return text.(string), nil
}

// Latest returns the id and text of the latest version under subject (GET
// /subjects/{subject}/versions/latest), uncached.
func (r *HTTP) Latest(ctx context.Context, subject string) (int, string, error) {
	tctx, c := track(ctx)
	info, err := r.client.GetLatestSchemaInfo(tctx, url.PathEscape(subject))
	if err != nil {
		return 0, "", r.wrap(ctx, c, fmt.Sprintf("latest schema of subject %q", subject), err)
	}
	return info.ID, info.Schema.String(), nil
}

// Compatible asks the registry whether schema is compatible with the
// versions under subject, by the subject's compatibility level (POST
// /compatibility/subjects/{subject}/versions), uncached.
func (r *HTTP) Compatible(ctx context.Context, subject, schema string) (bool, error) {
	tctx, c := track(ctx)
	ok, err := r.client.IsCompatible(tctx, url.PathEscape(subject), schema)
	if err != nil {
		return false, r.wrap(ctx, c, fmt.Sprintf("compatibility of a schema with subject %q", subject), err)
	}
	return ok, nil
}

// maxMessage bounds the registry's own message in an error's text.
const maxMessage = 512

// wrap classifies a client error of call c and strips any secret from its
// text.
func (r *HTTP) wrap(ctx context.Context, c *call, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %w", what, cerr)
	}
	withheld, tooLarge := c.state()
	if tooLarge != nil {
		// hamba's JSON decoder may keep only the text of the body's
		// error, or drop it (an error response's body).
		return &registryError{text: fmt.Sprintf("%s: schema registry %s: %s", what, r.base, tooLarge),
			kind: runtime.ErrRegistryUnavailable, cause: tooLarge}
	}
	var kind error
	text := err.Error()
	var re registry.Error
	var ue *url.Error
	switch {
	case errors.As(err, &re):
		text = fmt.Sprintf("HTTP %d", re.StatusCode)
		if re.Code != 0 || re.Message != "" {
			msg := re.Message
			if len(msg) > maxMessage {
				msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
			}
			text = fmt.Sprintf("HTTP %d, error code %d: %s", re.StatusCode, re.Code, msg)
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
	if withheld != "" {
		text += fmt.Sprintf(", after a redirect to %s, another host, which the credentials are not sent to", withheld)
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

// registryError is an HTTP registry's failure: its text, safe to log, the
// sentinel it matches (runtime.ErrSchemaNotFound,
// runtime.ErrRegistryUnavailable or none) and a cause of this package's own
// (a *ResponseTooLargeError) or none. The client's own error is not kept,
// so no secret can leak through Unwrap.
type registryError struct {
	text  string
	kind  error
	cause error
}

func (e *registryError) Error() string {
	if e.kind != nil {
		return e.text + " (" + e.kind.Error() + ")"
	}
	return e.text
}

func (e *registryError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.kind, e.cause} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
