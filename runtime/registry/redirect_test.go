package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
)

// authRecorder is a second server, another host (port) than the
// registry's: it records the Authorization header of each request it
// receives and answers GET /schemas/ids/{id} with a schema (401 for id 3).
type authRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newAuthRecorder(t *testing.T) *authRecorder {
	a := &authRecorder{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		w.Header().Set("Content-Type", confluenttest.ContentType)
		if r.URL.Path == "/schemas/ids/3" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error_code":401,"message":"Unauthorized"}`))
			return
		}
		_, _ = w.Write([]byte(`{"schema":"\"string\""}`))
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *authRecorder) received() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auth...)
}

// redirectingRegistry serves api (a confluenttest registry) behind a front
// that redirects GET /schemas/ids/1 and 3 to other (another host) and GET
// /schemas/ids/2 to /same/schemas/ids/2 on itself (the same host), which
// api serves, requiring its credentials.
func redirectingRegistry(t *testing.T, api *confluenttest.Server, other string) *httptest.Server {
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/schemas/ids/1", r.URL.Path == "/schemas/ids/3":
			http.Redirect(w, r, other+r.URL.Path, http.StatusTemporaryRedirect)
		case r.URL.Path == "/schemas/ids/2":
			http.Redirect(w, r, "/same"+r.URL.Path, http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/same/"):
			r.URL.Path = strings.TrimPrefix(r.URL.Path, "/same")
			r.URL.RawPath = ""
			api.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)
	return front
}

// Credentials go only to the configured scheme, host and port: a redirect
// to another host (here the same 127.0.0.1 on another port, which Go's own
// redirect rule, by host name alone, would trust) gets no Authorization
// header, basic or bearer; a redirect within the registry's host keeps
// them.
func TestHTTPRegistryCredentialsStayOnTheirHost(t *testing.T) {
	const password, token = "s3cret-pa55", "tok-3x4mpl3-very-secret"
	for _, tc := range []struct {
		name string
		set  func(*confluenttest.Server)
		cfg  func(url string) HTTPConfig
	}{
		{"basic", func(s *confluenttest.Server) { s.Username, s.Password = "svc", password },
			func(u string) HTTPConfig { return HTTPConfig{URL: u, Username: "svc", Password: password} }},
		{"basic in the URL", func(s *confluenttest.Server) { s.Username, s.Password = "svc", password },
			func(u string) HTTPConfig {
				return HTTPConfig{URL: strings.Replace(u, "http://", "http://svc:"+password+"@", 1)}
			}},
		{"bearer", func(s *confluenttest.Server) { s.Token = token },
			func(u string) HTTPConfig { return HTTPConfig{URL: u, Token: token} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			api := confluenttest.Start(t)
			api.Register("a", codecOrderV1) // id 1
			api.Register("b", codecOrderV2) // id 2
			tc.set(api)
			other := newAuthRecorder(t)
			front := redirectingRegistry(t, api, other.URL)
			r := httpRegistry(t, tc.cfg(front.URL))

			// Cross-host: the other server is asked, without credentials.
			text, err := r.Schema(ctx, 1)
			got := other.received()
			if len(got) != 1 {
				t.Fatalf("the other host received %d requests, want 1 (Schema: %q, %v)", len(got), text, err)
			}
			if got[0] != "" {
				t.Fatalf("a redirect to another host carried Authorization: %q", got[0])
			}
			if err != nil || text != `"string"` {
				t.Fatalf("Schema(1) through a cross-host redirect = %q, %v", text, err)
			}

			// The other host wants credentials: the error says why it has none.
			_, err = r.Schema(ctx, 3)
			if want := "HTTP 401, error code 401: Unauthorized, after a redirect to " + other.URL + ", another host, which the credentials are not sent to"; !errors.Is(err, runtime.ErrRegistryUnavailable) || !strings.Contains(err.Error(), want) {
				t.Fatalf("Schema(3), a 401 from the other host: %v, want %q", err, want)
			}
			if got := other.received(); len(got) != 2 || got[1] != "" {
				t.Fatalf("the other host received Authorization %q", got)
			}

			// Same host: the credentials follow (the API refuses without them).
			if text, err := r.Schema(ctx, 2); err != nil || !strings.Contains(text, "currency") {
				t.Fatalf("Schema(2) through a same-host redirect = %q, %v", text, err)
			}
			// And the registry's own requests still carry them.
			if _, err := r.Register(ctx, "c", codecOrderV1); err != nil {
				t.Fatalf("Register: %v", err)
			}
		})
	}
}

// The origin the credentials are bound to: scheme, host name (any case)
// and port (the scheme's default when none).
func TestHTTPRegistryOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://Registry.internal/x", "https://registry.internal:443/y?z", true},
		{"http://registry.internal", "http://registry.internal:80", true},
		{"http://127.0.0.1:8081", "http://127.0.0.1:8081/schemas", true},
		{"http://[::1]:8081", "http://[::1]:8081/", true},
		{"https://registry.internal:8081", "http://registry.internal:8081", false}, // a downgrade
		{"http://127.0.0.1:8081", "http://127.0.0.1:8082", false},
		{"http://127.0.0.1:8081", "http://localhost:8081", false},
		{"https://example.com", "https://sub.example.com", false}, // net/http's redirect rule would trust it
		{"https://example.com", "https://example.com.evil.test", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := origin(a) == origin(b); got != tc.same {
			t.Errorf("%s and %s: same origin %v (%s, %s), want %v", tc.a, tc.b, got, origin(a), origin(b), tc.same)
		}
	}
}
