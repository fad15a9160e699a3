package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/oneline"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/acemq/acemq-go/runtime"
)

// codecs builds the runtime's codec of every message from the exact
// schema text the generated package will hold: a schema the runtime cannot
// compile (a regular expression Go does not support, a draft it does not
// know, a keyword of the wrong type) would make every publish and every
// decode fail, so it is an error here, at the message's schema: value.
// The messages in skip are not checked (their schema is refused already).
func (b *builder) codecs(skip map[*Message]bool) {
	for _, m := range b.m.Messages {
		if skip[m] {
			continue
		}
		b.checkCodec(fmt.Sprintf("message %q", m.Name), b.messagePos[m], m)
	}
}

func (b *builder) checkCodec(who string, st site, m *Message) {
	at := st.schema
	var err error
	switch m.Format {
	case schema.JSONSchema:
		if d := unknownDraft(m.SchemaText); d != "" {
			b.errorIn(st.file, at.Pos, "%s: %s: $schema %q is a draft the runtime does not support; write \"$schema\": %q (or one of drafts 4, 6, 7, 2019-09), or drop $schema",
				who, oneline.Quote(at.Value), d, "https://json-schema.org/draft/2020-12/schema")
			return
		}
		_, err = runtime.NewJSONCodec(m.SchemaText)
	case schema.Avro:
		_, err = runtime.NewAvroCodec(noRegistry{}, m.Subject, m.SchemaText)
	default:
		return
	}
	if err == nil {
		return
	}
	if m.Format == schema.JSONSchema {
		// What a file alone passes, the bundle of it and the files it
		// refers to can break (a document without $schema takes its
		// bundle's draft): said by keyword and pointer into the text the
		// generated code holds, never by the compiler's internal URI.
		if es := schema.MetaschemaErrors(m.SchemaPath, m.SchemaText); len(es) > 0 {
			for _, e := range es {
				b.errorIn(st.file, at.Pos, "%s: %v", who, b.unbundled(e, m.dir, m.SchemaPath))
			}
			return
		}
	}
	b.errorIn(st.file, at.Pos, "%s: %s: the runtime cannot use this schema: %v; fix the schema",
		who, oneline.Quote(at.Value), err)
}

// unbundled is e, found in the bundled text of the schema file root, at
// the file and pointer it came from (with a word on why that file passes
// alone: in the bundle it takes root's draft), else at root.
func (b *builder) unbundled(e *schema.Error, dir, root string) *schema.Error {
	file, ptr, ok := unbundle(e.Pointer)
	if !ok {
		e.Line, e.Col = 0, 0 // a place in the bundle, not in the file
		return e
	}
	e.Path, e.Pointer, e.Line, e.Col = file, ptr, 0, 0
	if data, err := fs.ReadFile(b.fsys, input.Resolve(dir, file)); err == nil {
		e.Line, e.Col = schema.Locate(data, ptr)
	}
	e.Msg += fmt.Sprintf(" (bundled into %s, a document without $schema takes its draft: give %s a $schema of its own, or write it for that draft)", oneline.Quote(root), oneline.Quote(path.Base(file)))
	return e
}

// noRegistry is the registry checkCodec's Avro codec is built with: the
// codec only parses its schema then, it never calls the registry.
type noRegistry struct{}

var errNoRegistry = errors.New("no schema registry at generation time")

func (noRegistry) Register(context.Context, string, string) (int, error) { return 0, errNoRegistry }
func (noRegistry) Schema(context.Context, int) (string, error)           { return "", errNoRegistry }

// unknownDraft is the document's $schema when it names a JSON Schema draft
// other than those the runtime's compiler knows (4, 6, 7, 2019-09,
// 2020-12), else "".
func unknownDraft(text string) string {
	var doc struct {
		Schema *string `json:"$schema"`
	}
	if json.Unmarshal([]byte(text), &doc) != nil || doc.Schema == nil {
		return ""
	}
	s := strings.TrimSuffix(strings.TrimSuffix(*doc.Schema, "#"), "/")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	switch s {
	case "json-schema.org/draft-04/schema", "json-schema.org/draft-06/schema", "json-schema.org/draft-07/schema",
		"json-schema.org/draft/2019-09/schema", "json-schema.org/draft/2020-12/schema":
		return ""
	}
	if strings.HasPrefix(s, "json-schema.org/") {
		return *doc.Schema
	}
	return "" // a meta-schema of its own: the compiler says whether it can load it
}
