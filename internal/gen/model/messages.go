package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/internal/gen/oneline"
	"github.com/acemq/acemq-go/internal/gen/schema"
)

func (b *builder) messages() {
	b.messageByName = map[string]*Message{}
	b.messagePos = map[*Message]site{}
	b.byType = map[string]typeClaim{}
	for _, mm := range b.file.Messages {
		b.message(mm, nil)
	}
}

// site is where a message's schema: is written: in this manifest, or in
// the manifest it is imported from.
type site struct {
	file   string // the manifest, as errors name it
	schema manifest.Str
}

// typeClaim is the message that took an AMQP type.
type typeClaim struct {
	name string
	file string
	pos  manifest.Pos
}

// message resolves one entry of messages:, of this manifest (from nil) or
// of one it imports; it is added to the model.
func (b *builder) message(mm *manifest.Message, from *importSite) {
	who := fmt.Sprintf("message %q", mm.Name.Value)
	src, dir, claimAt := b.file.Path, b.dir, mm.Name.Pos
	m := &Message{Name: mm.Name.Value, Type: mm.Type.Value, SchemaPath: mm.Schema.Value, dir: b.dir, file: mm.Schema.Value}
	if from != nil {
		src, dir, claimAt = from.imp.Shown, from.imp.Dir, from.pos
		who += " (imported from " + from.imp.Shown + ")"
		m.From, m.dir, m.SchemaPath = from.imp.Ref, dir, from.imp.SchemaPath(mm.Schema.Value)
		m.imported = from
	}
	m.src = src
	m.Compat = CompatFull
	if mm.Compat != nil {
		m.Compat = CompatMode(mm.Compat.Value)
	}
	if m.GoName = b.baseNameIn(src, who, mm.Name, mm.GoName); m.GoName != "" {
		m.VarName = names.LowerFirst(m.GoName) + "Type"
		m.TypeFunc = "TypeOf" + m.GoName
		m.DecodeFunc = "Decode" + m.GoName
		m.SchemaConst = names.LowerFirst(m.GoName) + "Schema"
		m.HandlerMethod = "Handle" + m.GoName
		_ = b.ns.claim(m.GoName, who, claimAt) &&
			b.ns.claim(m.TypeFunc, who+" (its message type func)", claimAt) &&
			b.ns.claim(m.DecodeFunc, who+" (its decode func)", claimAt) &&
			b.ns.claim(m.VarName, who+" (its message type variable)", claimAt) &&
			b.ns.claim(m.SchemaConst, who+" (its schema constant)", claimAt)
	}
	for _, f := range mm.FieldGoNames {
		if why := names.CheckGoName(f.GoName.Value); why != "" {
			b.errorIn(src, f.GoName.Pos, "%s: field_go_names %q: %s", who, f.Pointer.Value, why)
			continue
		}
		m.fieldNames = append(m.fieldNames, f)
	}
	typeAt, typeFile := mm.Type.Pos, src
	if from != nil {
		typeAt, typeFile = from.pos, b.file.Path
	}
	if prev, dup := b.byType[m.Type]; dup {
		b.errorIn(typeFile, typeAt, "%s has the type %q of message %q (%s:%d:%d); a consumer dispatches on the type, so give each message its own",
			who, m.Type, prev.name, prev.file, prev.pos.Line, prev.pos.Col)
	} else {
		b.byType[m.Type] = typeClaim{name: m.Name, file: src, pos: mm.Name.Pos}
	}
	if b.loadSchema(who, mm, m) {
		b.messageFormat(who, mm, m)
		b.bundle(who, mm, m)
	}
	if m.Format == schema.JSONSchema && m.GoName != "" {
		m.CheckFunc = "acemqCheck" + m.GoName
		m.ShapeFunc = "acemqShape" + m.GoName
		m.EncodeFunc = "acemqEncode" + m.GoName
		m.JSONDecodeFunc = "acemqDecode" + m.GoName
		_ = b.ns.claim(m.CheckFunc, who+" (its check func)", claimAt) &&
			b.ns.claim(m.ShapeFunc, who+" (its decode shape func)", claimAt) &&
			b.ns.claim(m.EncodeFunc, who+" (its JSON encoder func)", claimAt) &&
			b.ns.claim(m.JSONDecodeFunc, who+" (its JSON decoder func)", claimAt)
	}
	b.messageByName[m.Name] = m
	b.messagePos[m] = site{file: src, schema: mm.Schema}
	b.m.Messages = append(b.m.Messages, m)
}

// messageFormat sets the format from the schema file's extension, and the
// registry subject (Avro only; default: the type).
func (b *builder) messageFormat(who string, mm *manifest.Message, m *Message) {
	switch strings.ToLower(path.Ext(mm.Schema.Value)) {
	case ".avsc":
		m.Format = schema.Avro
		m.Subject = m.Type
		if mm.Subject != nil {
			m.Subject = mm.Subject.Value
		}
		return
	case ".json":
		m.Format = schema.JSONSchema
	default:
		b.errorIn(m.src, mm.Schema.Pos, "%s: schema %q is neither .avsc (Avro) nor .json (JSON Schema)", who, mm.Schema.Value)
	}
	if mm.Subject != nil {
		b.errorIn(m.src, mm.Subject.Pos, "%s: subject is for Avro messages (a registry subject); remove it", who)
	}
}

// loadSchema reads the schema file (from fsys) and keeps its text as
// written (see asWritten); false when the file cannot be read.
func (b *builder) loadSchema(who string, mm *manifest.Message, m *Message) bool {
	name := input.Resolve(m.dir, mm.Schema.Value)
	if imp := m.imported; imp != nil && imp.imp.Root != "" && !input.Within(imp.imp.Root, name) {
		// Refused by input, which did not read it; said here too for a
		// file the service itself read.
		b.errorIn(m.src, mm.Schema.Pos, "%s: schema file %q: outside the module %s (a module's manifest reads only the module's own files)", who, mm.Schema.Value, imp.imp.Module)
		return false
	}
	data, err := fs.ReadFile(b.fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		b.errorIn(m.src, mm.Schema.Pos, "%s: schema file %q does not exist%s", who, mm.Schema.Value, b.nearFile(m.dir, mm.Schema.Value))
		return false
	}
	if err != nil {
		b.errorIn(m.src, mm.Schema.Pos, "%s: schema file %q: %v", who, mm.Schema.Value, err)
		return false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		var v any
		if uerr := json.Unmarshal(data, &v); uerr != nil {
			err = uerr // its offset is where the error is
		}
		b.errorIn(m.src, mm.Schema.Pos, "%s: %s is not JSON: %s", who, where(mm.Schema.Value, data, err), err)
		return false
	}
	m.SchemaText = asWritten(data)
	m.schemaData = data
	return true
}

// bundle makes the schema text of a JSON Schema message self-contained.
func (b *builder) bundle(who string, mm *manifest.Message, m *Message) {
	if m.Format != schema.JSONSchema {
		return
	}
	ids := b.schemaIDs(b.file.Messages, b.dir)
	if m.imported != nil {
		ids = b.schemaIDs(m.imported.imp.Manifest.Messages, m.dir)
	}
	text, refs, err := bundleJSONSchema(b.fsys, m.dir, path.Clean(mm.Schema.Value), m.schemaData, ids)
	if err != nil {
		b.errorIn(m.src, mm.Schema.Pos, "%s: %s: %v", who, oneline.Quote(mm.Schema.Value), err)
		return
	}
	m.SchemaText = text
	m.refFiles = refs
}

// schemaIDs maps the absolute $id of each JSON Schema file of a manifest
// (its messages, its directory dir) to its path, read once per manifest:
// an absolute $ref to one is bundled like a relative one.
func (b *builder) schemaIDs(messages []*manifest.Message, dir string) map[string]string {
	if b.ids == nil {
		b.ids = map[string]map[string]string{}
	}
	if ids, ok := b.ids[dir]; ok {
		return ids
	}
	ids := map[string]string{}
	b.ids[dir] = ids
	for _, mm := range messages {
		if strings.ToLower(path.Ext(mm.Schema.Value)) != ".json" {
			continue
		}
		data, err := fs.ReadFile(b.fsys, input.Resolve(dir, mm.Schema.Value))
		if err != nil {
			continue // reported with its message
		}
		var doc struct {
			ID  string `json:"$id"`
			Old string `json:"id"` // draft 4
		}
		if json.Unmarshal(data, &doc) != nil {
			continue
		}
		id := cmp.Or(doc.ID, doc.Old)
		if u, err := url.Parse(id); err == nil && u.IsAbs() {
			u.Fragment = ""
			if _, dup := ids[u.String()]; !dup {
				ids[u.String()] = path.Clean(mm.Schema.Value)
			}
		}
	}
	return ids
}

// nearFile suggests a file of the same directory whose name is close.
func (b *builder) nearFile(from, p string) string {
	dir := path.Dir(p)
	entries, err := fs.ReadDir(b.fsys, path.Dir(input.Resolve(from, p)))
	if err != nil {
		return fmt.Sprintf(" (and neither does the directory %q)", dir)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, path.Join(dir, e.Name()))
		}
	}
	return manifest.DidYouMean(p, names)
}

// where is "file:line:col" of a JSON syntax error.
func where(file string, data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return file
	}
	line, col := 1, 1
	// Offset counts the bytes read, the offending one included.
	for _, c := range data[:max(0, min(int(se.Offset)-1, len(data)))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// types maps every message's schema into the Go types to emit. It returns
// the messages whose schema was refused, and whether every problem is one
// of theirs (else no codec should be checked).
func (b *builder) types() (refused map[*Message]bool, ok bool) {
	var inputs []schema.Input
	byPath := map[string]*Message{}
	for _, m := range b.m.Messages {
		var fieldNames map[string]string
		for _, f := range m.fieldNames {
			if fieldNames == nil {
				fieldNames = map[string]string{}
			}
			fieldNames[f.Pointer.Value] = f.GoName.Value
		}
		inputs = append(inputs, schema.Input{
			Message: m.Name, GoName: m.GoName, Path: m.SchemaPath,
			Dir:  path.Dir(input.Resolve(m.dir, m.file)),
			Data: m.schemaData, Format: m.Format, FieldNames: fieldNames,
		})
		if _, ok := byPath[m.SchemaPath]; !ok {
			byPath[m.SchemaPath] = m
		}
	}
	roots := map[string]bool{}
	for _, m := range b.m.Messages {
		roots[m.GoName] = true
	}
	var reserved []string
	for _, n := range b.ns.order {
		if !roots[n] {
			reserved = append(reserved, n)
		}
	}
	u, err := schema.Build(inputs, reserved, schema.WithNames(b.names), schema.WithFS(b.fsys), schema.WithTypeNames(b.typeGoNames()), b.schemaVocabulary())
	b.m.Types = u
	refused, ok = map[*Message]bool{}, true
	for _, e := range flatten(err) {
		var clash *schema.NameClash
		if errors.As(e, &clash) {
			b.nameClash(clash)
			ok = false
			continue
		}
		var se *schema.Error
		if errors.As(e, &se) {
			if m := byPath[se.Path]; m != nil {
				b.errorIn(m.src, b.messagePos[m].schema.Pos, "message %q: %s", m.Name, se.Error())
				for _, other := range b.m.Messages {
					if other.SchemaPath == se.Path {
						refused[other] = true
					}
				}
				continue
			}
			// A file no message names, which a message's schema refers
			// to: reported at the first such message's schema:.
			if m := b.referrer(se.Path); m != nil {
				b.errorIn(m.src, b.messagePos[m].schema.Pos, "message %q: %s", m.Name, se.Error())
				ok = false
				continue
			}
		}
		b.errorf(manifest.Pos{}, "%v", e)
		ok = false
	}
	if u == nil {
		return refused, false
	}
	if err == nil {
		b.unusedTypeGoNames(u.UnusedTypeNames)
	}
	for _, m := range b.m.Messages {
		for _, ptr := range u.UnusedFieldNames[m.Name] {
			for _, f := range m.fieldNames {
				if f.Pointer.Value == ptr {
					b.errorIn(m.src, f.Pointer.Pos, "message %q: field_go_names %q: %s has no field there (a field is #/properties/<name> of an object, #/fields/<index> of an Avro record)", m.Name, ptr, m.SchemaPath)
				}
			}
		}
		m.Root = u.Roots[m.Name]
		if m.Root == nil && err == nil {
			b.errorIn(m.src, b.messagePos[m].schema.Pos, "message %q: its schema gave no type", m.Name)
		}
	}
	return refused, ok
}

// flatten lists the errors of an errors.Join tree.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// referrer is the first message whose schema embeds the file named file
// (by a relative $ref, or an absolute one to a manifest schema's $id), or
// nil.
func (b *builder) referrer(file string) *Message {
	for _, m := range b.m.Messages {
		if slices.Contains(m.refFiles, file) {
			return m
		}
	}
	return nil
}

// schemaVocabulary is the manifest's schema_vocabulary, for the schema
// stage.
func (b *builder) schemaVocabulary() schema.Option {
	v := b.file.SchemaVocabulary
	if v == nil {
		return schema.WithJSONVocabulary(nil, nil)
	}
	var keywords, formats []string
	for _, k := range v.Keywords {
		keywords = append(keywords, k.Value)
	}
	for _, f := range v.Formats {
		formats = append(formats, f.Value)
	}
	return schema.WithJSONVocabulary(keywords, formats)
}
