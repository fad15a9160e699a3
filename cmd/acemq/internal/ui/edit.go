package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
	"github.com/acemq/acemq-go/runtime/wire"
	"github.com/hamba/avro/v2"
	amqp "github.com/rabbitmq/amqp091-go"
)

// HeaderEdited stamps a copy republished with an edited body: when, and
// the name of the token that edited it ("2026-11-30T10:00:00.000Z by
// alice").
const HeaderEdited = "x-acemq-edited"

// Violation is what is wrong with an edit, at a place in the body.
type Violation struct {
	Location string `json:"location"`
	Message  string `json:"message"`
}

// invalidEdit is an edit its schema refuses: nothing was sent.
type invalidEdit struct {
	msg        string
	violations []Violation
}

func (e *invalidEdit) Error() string { return e.msg }

// encodeEdit validates text, an edited body of message type m, against
// its schema and encodes it: JSON through the runtime's JSON codec (its
// JSON Schema), Avro through its Avro codec (the manifest's schema, the
// console's registry).
func (s *Server) encodeEdit(ctx context.Context, m *model.Message, text string) ([]byte, string, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "", &invalidEdit{msg: "not JSON: " + err.Error(), violations: []Violation{{Location: "/", Message: err.Error()}}}
	}
	if dec.More() {
		return nil, "", &invalidEdit{msg: "not JSON: more after the value", violations: []Violation{{Location: "/", Message: "more after the value"}}}
	}
	if m.Format != schema.Avro {
		codec, err := runtime.NewJSONCodec(m.SchemaText)
		if err != nil {
			return nil, "", err
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(text))
		body, err := codec.Encode(ctx, json.RawMessage(compact.Bytes()))
		if err != nil {
			var se *runtime.SchemaError
			ie := &invalidEdit{msg: err.Error()}
			if errors.As(err, &se) {
				for _, v := range se.Violations {
					loc := v.Location
					if loc == "" {
						loc = "/"
					}
					ie.violations = append(ie.violations, Violation{Location: loc, Message: v.Message})
				}
			}
			if len(ie.violations) == 0 {
				ie.violations = []Violation{{Location: "/", Message: err.Error()}}
			}
			return nil, "", ie
		}
		return body, codec.ContentType(), nil
	}
	sch, err := avro.ParseWithCache(m.SchemaText, "", &avro.SchemaCache{})
	if err != nil {
		return nil, "", err
	}
	native, err := avroValue(sch, v, "")
	if err != nil {
		loc, msg, _ := strings.Cut(err.Error(), ": ")
		return nil, "", &invalidEdit{msg: err.Error(), violations: []Violation{{Location: loc, Message: msg}}}
	}
	reg := s.cfg.Registry
	if reg == nil {
		reg = registry.NewFingerprint()
	}
	codec, err := runtime.NewAvroCodec(reg, m.Subject, m.SchemaText)
	if err != nil {
		return nil, "", err
	}
	body, err := codec.Encode(ctx, native)
	if err != nil {
		return nil, "", &invalidEdit{msg: err.Error(), violations: []Violation{{Location: "/", Message: err.Error()}}}
	}
	return body, codec.ContentType(), nil
}

// editedCopy is the message an edit republishes: the original's identity
// (x-acemq-id, message id, correlation id, first seen, origin, type and
// the application's headers), the new body, attempt 1 with the error
// cleared, without the dead-letter headers (x-acemq-queue, x-death,
// x-first-death-*, x-last-death-*), stamped x-acemq-edited and, as a
// replay is, acemq-replayed-from, -at and -count.
func editedCopy(d *runtime.Delivery, src, who string, body []byte, contentType string, m *model.Message) (amqp.Publishing, error) {
	h := amqp.Table(maps.Clone(d.Headers))
	for k := range h {
		if k == wire.HeaderDeath || strings.HasPrefix(k, wire.HeaderFirstDeathPrefix) || strings.HasPrefix(k, wire.HeaderLastDeathPrefix) || k == wire.HeaderDeliveryCount {
			delete(h, k)
		}
	}
	delete(h, wire.HeaderQueue)
	delete(h, wire.HeaderError)
	h[wire.HeaderAttempt] = int64(1)
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	h[HeaderEdited] = now + " by " + who
	h[wire.HeaderReplayedFrom] = src
	h[wire.HeaderReplayedAt] = now
	h[wire.HeaderReplayCount] = int64(d.Envelope.ReplayCount + 1)
	if m.Format == schema.Avro {
		fp, err := registry.SchemaFingerprint(m.SchemaText)
		if err != nil {
			return amqp.Publishing{}, err
		}
		h[wire.HeaderSchemaFingerprint] = fp
		if _, carried := h[wire.HeaderSchema]; carried {
			if len(m.SchemaText) <= runtime.MaxCarriedSchema {
				h[wire.HeaderSchema] = m.SchemaText
			} else {
				delete(h, wire.HeaderSchema)
			}
		}
	}
	return amqp.Publishing{Headers: h, ContentType: contentType, DeliveryMode: amqp.Persistent,
		CorrelationId: d.Envelope.CorrelationID, ReplyTo: d.Envelope.ReplyTo, MessageId: d.Envelope.ID,
		Type: d.Type, Timestamp: time.Now(), Body: body}, nil
}

// EditRequest is an edit and retry.
type EditRequest struct {
	messageRef
	Body string `json:"body"`
}

// handleEdit republishes a message with the body the operator edited, to
// the queue it came from: validated against its schema first (an invalid
// edit sends nothing and answers the schema's errors, each at its
// field), then published with a confirm, and only after the confirm is
// the original acked.
func (s *Server) handleEdit(w http.ResponseWriter, r *http.Request, who string) {
	var req EditRequest
	if err := readJSON(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	key, err := parseKey(req.Key)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	var target, id string
	err = s.find(r.Context(), req.Source, req.Pos, key, func(d *runtime.Delivery) error {
		id = d.Envelope.ID
		m, ok := s.types[d.Envelope.Type]
		if !ok {
			return &invalidEdit{msg: fmt.Sprintf("type %q is not a message of the manifest: there is no schema to check an edit against", d.Envelope.Type)}
		}
		target = runtime.OwnQueue(d.Headers)
		switch {
		case target == "":
			return fmt.Errorf("no queue to go back to (no x-acemq-queue or x-death)")
		case !slices.Contains(s.allowed, target):
			return fmt.Errorf("%w: its headers name queue %s, not a queue of the manifest", runtime.ErrReplayNotAllowed, target)
		}
		body, ct, err := s.encodeEdit(r.Context(), m, req.Body)
		if err != nil {
			return err
		}
		msg, err := editedCopy(d, req.Source, who, body, ct, m)
		if err != nil {
			return err
		}
		p, err := s.conn.PublishOutgoing(r.Context(), runtime.Outgoing{RoutingKey: target, Mandatory: true, Msg: msg})
		if err != nil {
			return fmt.Errorf("publish the edited copy to %s (nothing sent; the original stays): %w", target, err)
		}
		if err := p.Wait(r.Context()); err != nil {
			return fmt.Errorf("the edited copy to %s was not confirmed (the original stays; a copy the broker took later is a duplicate): %w", target, err)
		}
		if err := d.Ack(r.Context()); err != nil {
			return fmt.Errorf("the edited copy is on %s, but the original could not be acked (it stays on %s: a duplicate): %w", target, req.Source, err)
		}
		return nil
	})
	what := fmt.Sprintf("message %s of %s", dashed(id), req.Source)
	var ie *invalidEdit
	switch {
	case errors.As(err, &ie):
		s.audit.write(auditEntry{Who: who, Action: "edit", What: what, Result: "refused, nothing sent: " + s.scrub(ie.msg)})
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": s.scrub(ie.msg), "violations": ie.violations})
		return
	case err != nil:
		s.audit.write(auditEntry{Who: who, Action: "edit", What: what, Error: s.scrub(err.Error())})
		s.fail(w, statusOf(err), err)
		return
	}
	result := "the edited copy was confirmed on " + target + ", the original acked"
	s.audit.write(auditEntry{Who: who, Action: "edit", What: what + " → " + target, Count: 1, Result: result})
	s.rescan()
	writeJSON(w, http.StatusOK, map[string]any{"result": result, "target": target})
}

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
