package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
)

func httpRegistry(t *testing.T, cfg HTTPConfig) *HTTP {
	t.Helper()
	r, err := NewHTTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The publisher registers once and the consumer looks each writer id up
// once: after that, encoding and decoding make no HTTP call.
func TestHTTPRegistrySteadyStateMakesNoCall(t *testing.T) {
	ctx := context.Background()
	srv := confluenttest.Start(t)
	v1ID := srv.Register("orders", codecOrderV1) // an older producer's schema
	pubReg := httpRegistry(t, HTTPConfig{URL: srv.URL})
	subReg := httpRegistry(t, HTTPConfig{URL: srv.URL})
	pub := codecMustAvro(t, pubReg, "orders", codecOrderV2)
	sub := codecMustAvro(t, subReg, "orders", codecOrderV2)
	old := codecMustAvro(t, httpRegistry(t, HTTPConfig{URL: srv.URL}), "orders", codecOrderV1)
	oldBody, err := old.Encode(ctx, codecOrderV1Go{ID: "old"})
	if err != nil {
		t.Fatal(err)
	}
	warm := func() {
		body, err := pub.Encode(ctx, codecOrderV2Go{ID: "A-1", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		var got codecOrderV2Go
		if err := sub.Decode(ctx, body, &got); err != nil || got.Currency != "USD" {
			t.Fatalf("v2 body: %+v, %v", got, err)
		}
		if err := sub.Decode(ctx, oldBody, &got); err != nil || got != (codecOrderV2Go{ID: "old", Currency: "EUR"}) {
			t.Fatalf("v1 body (id %d) read as v2: %+v, %v", v1ID, got, err)
		}
	}
	warm()
	before := srv.Calls()
	for range 100 {
		warm()
	}
	if n := srv.Calls() - before; n != 0 {
		t.Fatalf("100 encodes and 200 decodes in the steady state made %d HTTP calls, want 0", n)
	}
	if before != 4 { // register v1 (old), register v2, GET v2 by id, GET v1 by id
		t.Logf("warm-up made %d calls", before)
	}
}

func TestHTTPRegistryErrors(t *testing.T) {
	ctx := context.Background()
	srv := confluenttest.Start(t)
	r := httpRegistry(t, HTTPConfig{URL: srv.URL})

	// An id the registry does not know: not found, naming the id.
	_, err := r.Schema(ctx, 4242)
	if !errors.Is(err, runtime.ErrSchemaNotFound) || errors.Is(err, runtime.ErrRegistryUnavailable) ||
		!strings.Contains(err.Error(), "schema id 4242: schema registry "+srv.URL+": HTTP 404, error code 40403: Schema 4242 not found") {
		t.Fatalf("unknown id: %v", err)
	}
	// A 5xx: unavailable.
	srv.Fail(true)
	if _, err := r.Schema(ctx, 1); !errors.Is(err, runtime.ErrRegistryUnavailable) || !strings.Contains(err.Error(), "HTTP 500, error code 50001") {
		t.Fatalf("5xx: %v", err)
	}
	srv.Fail(false)
	// An invalid schema: neither (a permanent error for the publisher).
	if _, err := r.Register(ctx, "orders", `{"type":"record","name":"X","fields":[{"name":"a","type":"nope"}]}`); err == nil ||
		errors.Is(err, runtime.ErrRegistryUnavailable) {
		t.Fatalf("invalid schema: %v", err)
	}
	// An incompatible schema under a BACKWARD subject: 409, neither.
	srv.Compatibility = "BACKWARD"
	if _, err := r.Register(ctx, "strict", codecOrderV1); err != nil {
		t.Fatal(err)
	}
	incompatible := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
	if _, err := r.Register(ctx, "strict", incompatible); err == nil || errors.Is(err, runtime.ErrRegistryUnavailable) ||
		!strings.Contains(err.Error(), "HTTP 409, error code 409") {
		t.Fatalf("incompatible: %v", err)
	}
	if ok, err := r.Compatible(ctx, "strict", incompatible); err != nil || ok {
		t.Fatalf("Compatible(incompatible) = %v, %v", ok, err)
	}
	if ok, err := r.Compatible(ctx, "strict", codecOrderV2); err != nil || !ok {
		t.Fatalf("Compatible(v2) = %v, %v", ok, err)
	}
	if id, text, err := r.Latest(ctx, "strict"); err != nil || !strings.Contains(text, `"name":"id"`) || id < 1 {
		t.Fatalf("Latest: %d %q %v", id, text, err)
	}
	if _, _, err := r.Latest(ctx, "nobody"); !errors.Is(err, runtime.ErrSchemaNotFound) || !strings.Contains(err.Error(), "error code 40401") {
		t.Fatalf("Latest of an unknown subject: %v", err)
	}
	// Lookup only: an unregistered schema is not found, a registered one is.
	look := httpRegistry(t, HTTPConfig{URL: srv.URL, LookupOnly: true})
	if _, err := look.Register(ctx, "strict", codecOrderV2); !errors.Is(err, runtime.ErrSchemaNotFound) || !strings.Contains(err.Error(), "look up schema under subject \"strict\"") {
		t.Fatalf("lookup of an unregistered schema: %v", err)
	}
	if id, err := look.Register(ctx, "strict", codecOrderV1); err != nil || id < 1 {
		t.Fatalf("lookup of a registered schema: %d, %v", id, err)
	}
	// Connection refused: unavailable.
	srv.Stop()
	if _, err := r.Schema(ctx, 99); !errors.Is(err, runtime.ErrRegistryUnavailable) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("connection refused: %v", err)
	}
}

// A registry that does not answer in time is unavailable, within Timeout.
func TestHTTPRegistryTimeout(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer hang.Close()
	defer close(release)
	r := httpRegistry(t, HTTPConfig{URL: hang.URL, Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := r.Schema(context.Background(), 1)
	if !errors.Is(err, runtime.ErrRegistryUnavailable) || time.Since(start) > 5*time.Second {
		t.Fatalf("a hung registry: %v after %v", err, time.Since(start))
	}
}

// Basic auth and bearer tokens are sent; a wrong one is refused; neither
// the password nor the token ever appears in an error.
func TestHTTPRegistryCredentialsNeverInAnError(t *testing.T) {
	ctx := context.Background()
	const password, token = "s3cret-pa55", "tok-3x4mpl3-very-secret"
	srv := confluenttest.Start(t)
	srv.Username, srv.Password = "svc", password
	good := httpRegistry(t, HTTPConfig{URL: srv.URL, Username: "svc", Password: password})
	if _, err := good.Register(ctx, "orders", codecOrderV1); err != nil {
		t.Fatalf("basic auth: %v", err)
	}
	// Credentials in the URL are taken out of it.
	inURL := httpRegistry(t, HTTPConfig{URL: strings.Replace(srv.URL, "http://", "http://svc:"+password+"@", 1)})
	if strings.Contains(inURL.URL(), password) {
		t.Fatalf("URL() = %s", inURL.URL())
	}
	if _, err := inURL.Register(ctx, "orders", codecOrderV1); err != nil {
		t.Fatalf("basic auth from the URL: %v", err)
	}
	var errs []error
	wrong := httpRegistry(t, HTTPConfig{URL: "http://svc:wrong-" + password + "@" + strings.TrimPrefix(srv.URL, "http://")})
	_, err := wrong.Schema(ctx, 1)
	if !errors.Is(err, runtime.ErrRegistryUnavailable) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("wrong password: %v", err)
	}
	errs = append(errs, err)

	srv.Username, srv.Password, srv.Token = "", "", token
	withToken := httpRegistry(t, HTTPConfig{URL: srv.URL, Token: token})
	if _, err := withToken.Schema(ctx, 1); err != nil {
		t.Fatalf("bearer token: %v", err)
	}
	badToken := httpRegistry(t, HTTPConfig{URL: srv.URL, Token: token + "-old"})
	_, err = badToken.Schema(ctx, 1)
	errs = append(errs, err)
	srv.Stop()
	_, err = withToken.Schema(ctx, 2)
	errs = append(errs, err)
	_, err = inURL.Register(ctx, "orders", codecOrderV2)
	errs = append(errs, err)
	if _, err := NewHTTP(HTTPConfig{URL: "ftp://svc:" + password + "@x"}); err != nil {
		errs = append(errs, err)
	}
	for _, err := range errs {
		if err == nil {
			t.Fatal("an expected error is nil")
		}
		if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), token) {
			t.Fatalf("an error shows a secret: %v", err)
		}
	}
}

// TLS: the client verifies the server with the roots it is given.
func TestHTTPRegistryTLS(t *testing.T) {
	ctx := context.Background()
	api := confluenttest.Start(t)
	srv := httptest.NewTLSServer(api)
	defer srv.Close()
	trusted := httpRegistry(t, HTTPConfig{URL: srv.URL, TLS: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	if _, err := trusted.Register(ctx, "orders", codecOrderV1); err != nil {
		t.Fatalf("TLS with the server's root: %v", err)
	}
	untrusted := httpRegistry(t, HTTPConfig{URL: srv.URL})
	if _, err := untrusted.Register(ctx, "orders", codecOrderV1); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("TLS without the root: %v", err)
	}
}

func TestOpenRegistryFromConfig(t *testing.T) {
	srv := confluenttest.Start(t)
	srv.Token = "t0k"
	t.Setenv("ACEMQ_TEST_REG_HOST", strings.TrimPrefix(srv.URL, "http://"))
	t.Setenv("ACEMQ_TEST_REG_TOKEN", "t0k")
	reg := OpenLazy(Config{URL: "http://${ACEMQ_TEST_REG_HOST}", TokenEnv: "ACEMQ_TEST_REG_TOKEN"})
	if err := reg.(interface{ OpenNow() error }).OpenNow(); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(context.Background(), "orders", codecOrderV1); err != nil {
		t.Fatalf("configured HTTP registry: %v", err)
	}
	dir := t.TempDir()
	t.Setenv("ACEMQ_TEST_REG_DIR", dir)
	if r, err := Open(Config{Directory: "${ACEMQ_TEST_REG_DIR}/reg"}); err != nil || r.(*Directory).Dir() != dir+"/reg" {
		t.Fatalf("configured directory: %v", err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "http://x", TokenEnv: "ACEMQ_TEST_REG_UNSET"}, "the environment variable ACEMQ_TEST_REG_UNSET is empty or unset"},
		{Config{URL: "http://${ACEMQ_TEST_REG_UNSET}"}, "the environment variable ACEMQ_TEST_REG_UNSET is unset"},
		{Config{URL: "http://x", Directory: "d"}, "both a directory and a URL"},
		{Config{}, "neither a directory nor a URL"},
	} {
		if _, err := Open(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	lazy := OpenLazy(Config{})
	if _, err := lazy.Schema(context.Background(), 1); !errors.Is(err, runtime.ErrRegistryUnavailable) {
		t.Fatalf("a registry that cannot open: %v", err)
	}
}

// A subject with '/', '?', '#' and a space reaches its own endpoint.
func TestHTTPRegistrySubjectIsEscaped(t *testing.T) {
	ctx := context.Background()
	srv := confluenttest.Start(t)
	r := httpRegistry(t, HTTPConfig{URL: srv.URL})
	const subject = "orders/v1 value?x#y"
	id, err := r.Register(ctx, subject, codecOrderV1)
	if err != nil {
		t.Fatal(err)
	}
	if got, text, err := r.Latest(ctx, subject); err != nil || got != id || !strings.Contains(text, "Order") {
		t.Fatalf("Latest(%q) = %d %q %v, want id %d", subject, got, text, err, id)
	}
	if _, _, err := r.Latest(ctx, "orders"); !errors.Is(err, runtime.ErrSchemaNotFound) {
		t.Fatalf("the subject leaked into another path: Latest(orders) = %v", err)
	}
	look := httpRegistry(t, HTTPConfig{URL: srv.URL, LookupOnly: true})
	if got, err := look.Register(ctx, subject, codecOrderV1); err != nil || got != id {
		t.Fatalf("lookup: %d, %v", got, err)
	}
}
