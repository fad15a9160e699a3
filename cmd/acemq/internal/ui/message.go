package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acemq/acemq-go/cmd/acemq/internal/bodies"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// errGone is the error of a message no longer on its queue.
var errGone = errors.New("the message is no longer on its queue (moved, replayed or taken since the pass read it): refresh")

var errFound = errors.New("found")

// find reads src again (without consuming it) up to the message with key,
// which was at pos when the pass read it (messages only move up: the ones
// ahead of it may have gone), and calls fn with it while it is held; then
// everything read goes back, except what fn acked. When it is not in the
// first pos+1 messages the whole queue is read.
func (s *Server) find(ctx context.Context, src string, pos int, key Key, fn func(d *runtime.Delivery) error) error {
	if !s.isSource(src) {
		return fmt.Errorf("%s is not a queue this console reads", src)
	}
	unlock, err := s.locks.lock(ctx, src)
	if err != nil {
		return err
	}
	defer unlock()
	var fnErr error
	look := func(max int) (bool, error) {
		found := false
		_, err := s.conn.Browse(ctx, src, max, func(d *runtime.Delivery) error {
			if keyOf(d.Envelope, d.Body) != key {
				return nil
			}
			found = true
			fnErr = fn(d)
			return errFound
		})
		if errors.Is(err, errFound) {
			err = nil
		}
		return found, err
	}
	found, err := look(pos + 1)
	if err == nil && !found {
		found, err = look(0)
	}
	switch {
	case err != nil:
		return err
	case !found:
		return errGone
	}
	return fnErr
}

func (s *Server) isSource(q string) bool {
	for _, src := range s.sources {
		if src == q {
			return true
		}
	}
	return false
}

// MessageView is a message as the page opens it.
type MessageView struct {
	Source     string              `json:"source"`
	Pos        int                 `json:"pos"`
	Key        string              `json:"key"`
	Envelope   map[string]any      `json:"envelope"`
	Properties map[string]any      `json:"properties"`
	Headers    []HeaderView        `json:"headers"`
	Deaths     []map[string]string `json:"deaths"`
	Reason     string              `json:"reason"`
	Group      string              `json:"group"`
	Body       BodyView            `json:"body"`
	// Editable: the manifest knows its type, so an edit can be validated.
	Editable bool   `json:"editable"`
	Message  string `json:"message_name,omitempty"`
	Target   string `json:"target,omitempty"` // where a replay or an edit sends it
}

// HeaderView is one header, its value as text.
type HeaderView struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// BodyView is a body decoded for reading.
type BodyView struct {
	Format string `json:"format"` // json, avro, text or binary
	Text   string `json:"text,omitempty"`
	Schema string `json:"schema,omitempty"` // the Avro schema it was read with
	Error  string `json:"error,omitempty"`  // why it is not shown decoded
	Size   int    `json:"size"`
}

func (s *Server) view(ctx context.Context, src string, pos int, d *runtime.Delivery) MessageView {
	env := d.Envelope
	why := reason(env, d.Headers)
	v := MessageView{Source: src, Pos: pos, Key: keyOf(env, d.Body).String(), Reason: why, Group: Fold(why),
		Target: runtime.OwnQueue(d.Headers)}
	v.Envelope = map[string]any{
		"id": env.ID, "correlation_id": env.CorrelationID, "type": env.Type, "origin": env.Origin,
		"attempt": env.Attempt, "first_seen": timeText(env.FirstSeen), "replay_count": env.ReplayCount,
		"replayed_from": env.ReplayedFrom, "replayed_at": timeText(env.ReplayedAt), "content_type": env.ContentType,
		"error": env.Error, "queue": v.Target,
	}
	v.Properties = map[string]any{"type": d.Type, "content_type": d.ContentType, "exchange": d.Exchange,
		"routing_key": d.RoutingKey, "redelivered": d.Redelivered}
	names := make([]string, 0, len(d.Headers))
	for k := range d.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == wire.HeaderDeath {
			continue
		}
		v.Headers = append(v.Headers, HeaderView{Name: k, Value: valueText(d.Headers[k])})
	}
	if deaths, ok := d.Headers[wire.HeaderDeath].([]any); ok {
		for _, x := range deaths {
			t, ok := x.(amqp.Table)
			if !ok {
				continue
			}
			m := map[string]string{}
			for k, val := range t {
				m[k] = valueText(val)
			}
			v.Deaths = append(v.Deaths, m)
		}
	}
	v.Body = s.bodyView(ctx, d)
	if m, ok := s.types[env.Type]; ok {
		v.Editable, v.Message = true, m.Name
	}
	return v
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// valueText is a header value as text: strings as they are, times in RFC
// 3339, tables and arrays as JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return fmt.Sprintf("%x", x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case amqp.Table, []any:
		b, err := json.Marshal(plain(x))
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// plain turns amqp tables into what encoding/json writes.
func plain(v any) any {
	switch x := v.(type) {
	case amqp.Table:
		m := map[string]any{}
		for k, val := range x {
			m[k] = plain(val)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = plain(val)
		}
		return out
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case []byte:
		return valueText(x)
	}
	return v
}

// bodyView decodes a body for reading: JSON pretty-printed, Avro with
// the manifest's schemas (or its registry) as JSON, text as it is,
// anything else as binary (its bytes on request).
func (s *Server) bodyView(ctx context.Context, d *runtime.Delivery) BodyView {
	b := BodyView{Size: len(d.Body)}
	switch {
	case bodies.IsAvro(d):
		b.Format = "avro"
		if s.cfg.Bodies == nil {
			b.Error = "Avro: no manifest schemas to read it with"
			return b
		}
		text, with, err := s.cfg.Bodies.Decode(ctx, d)
		if err != nil {
			b.Error = s.scrub(err.Error())
			return b
		}
		b.Text, b.Schema = pretty([]byte(text)), with
	case json.Valid(d.Body) && (strings.Contains(d.ContentType, "json") || d.ContentType == ""):
		b.Format, b.Text = "json", pretty(d.Body)
	case utf8.Valid(d.Body):
		b.Format, b.Text = "text", string(d.Body)
	default:
		b.Format = "binary"
	}
	return b
}

func pretty(j []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, j, "", "  "); err != nil {
		return string(j)
	}
	return out.String()
}

// bodyText is the text a search looks in: the decoded body, or the bytes
// as text.
func (s *Server) bodyText(ctx context.Context, d *runtime.Delivery) string {
	if bodies.IsAvro(d) {
		if s.cfg.Bodies != nil {
			if text, _, err := s.cfg.Bodies.Decode(ctx, d); err == nil {
				return text
			}
		}
		return ""
	}
	if utf8.Valid(d.Body) {
		return string(d.Body)
	}
	return ""
}

type messageRef struct {
	Source string `json:"source"`
	Pos    int    `json:"pos"`
	Key    string `json:"key"`
}

func refOf(r *http.Request) messageRef {
	q := r.URL.Query()
	return messageRef{Source: q.Get("source"), Pos: intParam(r, "pos", 0), Key: q.Get("key")}
}

func (s *Server) handleMessage(w http.ResponseWriter, r *http.Request) {
	ref := refOf(r)
	key, err := parseKey(ref.Key)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	var v MessageView
	err = s.find(r.Context(), ref.Source, ref.Pos, key, func(d *runtime.Delivery) error {
		v = s.view(r.Context(), ref.Source, ref.Pos, d)
		return nil
	})
	if err != nil {
		s.fail(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleRaw sends a body's bytes as they are, as a download (never
// rendered by the browser).
func (s *Server) handleRaw(w http.ResponseWriter, r *http.Request) {
	ref := refOf(r)
	key, err := parseKey(ref.Key)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	var body []byte
	err = s.find(r.Context(), ref.Source, ref.Pos, key, func(d *runtime.Delivery) error {
		body = d.Body
		return nil
	})
	if err != nil {
		s.fail(w, statusOf(err), err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+key.String()+`.bin"`)
	_, _ = w.Write(body)
}

func statusOf(err error) int {
	if errors.Is(err, errGone) || errors.Is(err, runtime.ErrQueueNotFound) {
		return http.StatusNotFound
	}
	return http.StatusBadGateway
}
