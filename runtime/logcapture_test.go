package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// logRecord is one slog record as a test reads it: level, message and
// every attribute (the logger's own With attributes included), flattened.
type logRecord struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

func (r logRecord) String() string {
	return fmt.Sprintf("%s %q %v", r.Level, r.Message, r.Attrs)
}

// logCapture is a slog.Handler that keeps every record at Debug and above.
type logCapture struct {
	mu      *sync.Mutex
	records *[]logRecord
	attrs   []slog.Attr
	group   string
}

func newLogCapture() (*logCapture, *slog.Logger) {
	h := &logCapture{mu: &sync.Mutex{}, records: &[]logRecord{}}
	return h, slog.New(h)
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Message: r.Message, Attrs: map[string]string{}}
	for _, a := range h.attrs {
		flatten(rec.Attrs, h.group, a)
	}
	r.Attrs(func(a slog.Attr) bool {
		flatten(rec.Attrs, h.group, a)
		return true
	})
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	return nil
}

func flatten(into map[string]string, prefix string, a slog.Attr) {
	key := a.Key
	if prefix != "" {
		key = prefix + "." + key
	}
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			flatten(into, key, g)
		}
		return
	}
	into[key] = v.String()
}

func (h *logCapture) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}

func (h *logCapture) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

// all returns a copy of the records so far.
func (h *logCapture) all() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logRecord(nil), *h.records...)
}

// matching returns the records whose message contains msg.
func (h *logCapture) matching(msg string) []logRecord {
	var out []logRecord
	for _, r := range h.all() {
		if strings.Contains(r.Message, msg) {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits up to d for n records whose message contains msg.
func (h *logCapture) waitFor(tb testing.TB, msg string, n int, d time.Duration) []logRecord {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		if got := h.matching(msg); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d records with %q within %s, want %d; all records:\n%s", len(h.matching(msg)), msg, d, n, h.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *logCapture) dump() string {
	var b strings.Builder
	for _, r := range h.all() {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// text is every record rendered, for "never shows X" checks.
func (h *logCapture) text() string { return h.dump() }
