package compat

import (
	"fmt"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/schema"
)

// Report is what comparing two versions of a manifest found.
type Report struct {
	// Problems are the changes that break a reader, message by message in
	// the new manifest's order.
	Problems []Problem
	// Notes say what was not compared: a message new in this version, one
	// removed from it, one whose compat is none. They are not problems.
	Notes []string
	// Checked counts the messages compared, by mode.
	Checked map[Mode]int
}

// Compatible is true when no message breaks a reader.
func (r *Report) Compatible() bool { return len(r.Problems) == 0 }

// Compare checks every message of cur against the message of the same name
// in prev, in the directions of cur's compat: (default full).
func Compare(prev, cur *model.Model) (*Report, error) {
	byName := map[string]*model.Message{}
	for _, m := range prev.Messages {
		byName[m.Name] = m
	}
	rep := &Report{Checked: map[Mode]int{}}
	for _, m := range cur.Messages {
		old, ok := byName[m.Name]
		delete(byName, m.Name)
		mode := Mode(m.Compat)
		switch {
		case !ok:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: new message, no previous version to compare with", m.Name))
			continue
		case mode == ModeNone:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: compat none, not checked", m.Name))
			continue
		}
		rep.Checked[mode]++
		rep.Problems = append(rep.Problems, typeProperty(old, m, mode)...)
		ps, err := compareMessage(old, m, mode)
		if err != nil {
			return nil, fmt.Errorf("message %q: %w", m.Name, err)
		}
		rep.Problems = append(rep.Problems, ps...)
	}
	for _, m := range prev.Messages {
		if _, removed := byName[m.Name]; removed {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: removed (it was in the previous manifest)", m.Name))
		}
	}
	return rep, nil
}

// typeProperty: a consumer dispatches on the AMQP type property and parks
// a type it has no handler for, so a message whose type changed is parked
// by old consumers (new messages) and by new ones (old messages, replayed).
//
//	amqp-type-changed: both directions
func typeProperty(old, cur *model.Message, mode Mode) []Problem {
	if old.Type == cur.Type {
		return nil
	}
	var out []Problem
	for _, d := range mode.directions() {
		out = append(out, Problem{Message: cur.Name, Path: "$", Rule: "amqp-type-changed", Direction: d,
			Detail: fmt.Sprintf("the type property was %q, is %q; a consumer parks a type it has no handler for (declare the new type as a message of its own and keep the old one while both are in flight)", old.Type, cur.Type)})
	}
	return out
}

// compareMessage compares one message's two schemas.
//
//	encoding-changed: Avro became JSON Schema or the reverse; no reader of one reads the other
func compareMessage(old, cur *model.Message, mode Mode) ([]Problem, error) {
	if old.Format != cur.Format {
		var out []Problem
		for _, d := range mode.directions() {
			out = append(out, Problem{Message: cur.Name, Path: "$", Rule: "encoding-changed", Direction: d,
				Detail: fmt.Sprintf("the schema was %s (%s), is %s (%s)", formatName(old.Format), old.SchemaPath, formatName(cur.Format), cur.SchemaPath)})
		}
		return out, nil
	}
	if cur.Format == schema.Avro {
		return CheckAvro(cur.Name, old.SchemaText, cur.SchemaText, mode)
	}
	return CheckJSON(cur.Name, old.SchemaText, cur.SchemaText, mode)
}

func formatName(f schema.Format) string {
	if f == schema.Avro {
		return "Avro"
	}
	return "JSON Schema"
}
