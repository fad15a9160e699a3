package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime"
)

// hugeBody serves, for every request, status and a JSON body of about size
// bytes, {"schema":"aaaa…"} or {"error_code":…,"message":"aaaa…"},
// streamed in 64 KiB writes (with a Content-Length when declare) until
// the client stops reading. It counts the bytes it managed to write.
func hugeBody(t *testing.T, status int, size int64, declare bool) *httptest.Server {
	t.Helper()
	chunk := []byte(strings.Repeat("a", 64<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head, tail := `{"schema":"`, `"}`
		if status != http.StatusOK {
			head = fmt.Sprintf(`{"error_code":%d,"message":"`, status*100+1)
		}
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		if declare {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		w.WriteHeader(status)
		if _, err := w.Write([]byte(head)); err != nil {
			return
		}
		for left := size - int64(len(head)+len(tail)); left > 0; left -= int64(len(chunk)) {
			c := chunk
			if left < int64(len(c)) {
				c = c[:left]
			}
			if _, err := w.Write(c); err != nil {
				return // the client hung up
			}
		}
		_, _ = w.Write([]byte(tail))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A registry's response longer than MaxResponseBytes (4 MiB by default)
// is an error naming the URL, without credentials, and the limit, found
// with errors.As (*ResponseTooLargeError) and matching
// runtime.ErrRegistryUnavailable; the client reads no further than the
// limit, so a 200 MiB body costs a few MiB, not the body's size.
func TestHTTPRegistryResponseIsCapped(t *testing.T) {
	const body = 200 << 20
	const password = "s3cret-pa55"
	for _, tc := range []struct {
		name    string
		status  int
		declare bool
		limit   int64
	}{
		{"streamed schema, default limit", http.StatusOK, false, 0},
		{"declared length, default limit", http.StatusOK, true, 0},
		{"streamed error body, default limit", http.StatusInternalServerError, false, 0},
		{"streamed schema, 1 MiB limit", http.StatusOK, false, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := hugeBody(t, tc.status, body, tc.declare)
			r := httpRegistry(t, HTTPConfig{URL: strings.Replace(srv.URL, "http://", "http://svc:"+password+"@", 1), MaxResponseBytes: tc.limit})
			limit := tc.limit
			if limit == 0 {
				limit = DefaultMaxResponseBytes
			}
			goruntime.GC()
			var before, after goruntime.MemStats
			goruntime.ReadMemStats(&before)
			_, err := r.Schema(context.Background(), 1)
			goruntime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%v; %.1f MiB allocated", err, float64(allocated)/(1<<20))
			if allocated > 8*uint64(limit)+(4<<20) {
				t.Errorf("a %d MiB response allocated %.1f MiB, want at most 8 × the %d MiB limit + 4 MiB", body>>20, float64(allocated)/(1<<20), limit>>20)
			}
			var tooLarge *ResponseTooLargeError
			if !errors.As(err, &tooLarge) {
				t.Fatalf("Schema = %v, want a *ResponseTooLargeError", err)
			}
			if tooLarge.URL != srv.URL+"/schemas/ids/1" || tooLarge.Limit != limit {
				t.Errorf("ResponseTooLargeError{URL: %q, Limit: %d}, want %q and %d", tooLarge.URL, tooLarge.Limit, srv.URL+"/schemas/ids/1", limit)
			}
			want := fmt.Sprintf("schema id 1: schema registry %s: the response to %s/schemas/ids/1 is longer than the limit of %d bytes (HTTPConfig.MaxResponseBytes) (acemq: schema registry unavailable)", srv.URL, srv.URL, limit)
			if err.Error() != want {
				t.Errorf("error text\n%s\nwant\n%s", err, want)
			}
			if !errors.Is(err, runtime.ErrRegistryUnavailable) || errors.Is(err, runtime.ErrSchemaNotFound) {
				t.Errorf("%v: want ErrRegistryUnavailable only", err)
			}
			if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "svc:") {
				t.Errorf("the error shows the credentials: %v", err)
			}
		})
	}
}

// A response within the limit is read whole: a 3 MiB schema text under
// the default 4 MiB, and the limit counts the body, not the schema.
func TestHTTPRegistryResponseUnderTheCap(t *testing.T) {
	pad := strings.Repeat(" ", 3<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, `{"schema":"%s\"string\""}`, pad)
	}))
	defer srv.Close()
	r := httpRegistry(t, HTTPConfig{URL: srv.URL})
	if text, err := r.Schema(context.Background(), 1); err != nil || text != `"string"` {
		t.Fatalf("a 3 MiB response: %q, %v", text, err)
	}
	small := httpRegistry(t, HTTPConfig{URL: srv.URL, MaxResponseBytes: 1 << 20})
	var tooLarge *ResponseTooLargeError
	if _, err := small.Schema(context.Background(), 1); !errors.As(err, &tooLarge) || tooLarge.Limit != 1<<20 {
		t.Fatalf("the same response with a 1 MiB limit: %v", err)
	}
}
