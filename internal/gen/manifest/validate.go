package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/acemq/acemq-go/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// manifestSchema is schemas/manifest.schema.json, compiled once, with its
// document kept to read the known keys of an object back.
var manifestSchema = sync.OnceValues(func() (*compiledSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.Manifest))
	if err != nil {
		return nil, fmt.Errorf("manifest schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemas.ManifestURL, doc); err != nil {
		return nil, fmt.Errorf("manifest schema: %w", err)
	}
	s, err := c.Compile(schemas.ManifestURL)
	if err != nil {
		return nil, fmt.Errorf("manifest schema: %w", err)
	}
	return &compiledSchema{schema: s, doc: doc}, nil
})

type compiledSchema struct {
	schema *jsonschema.Schema
	doc    any
}

var printer = message.NewPrinter(language.English)

// validate checks value against the manifest schema and records one Error
// per failed keyword, at the node it concerns.
func (t *tree) validate(value any) {
	cs, err := manifestSchema()
	if err != nil {
		t.errs = append(t.errs, &Error{File: t.file, Msg: err.Error()})
		return
	}
	err = cs.schema.Validate(value)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		if err != nil {
			t.errs = append(t.errs, &Error{File: t.file, Msg: err.Error()})
		}
		return
	}
	for _, leaf := range leaves(ve, nil) {
		t.explain(cs, leaf.err, leaf.path)
	}
}

type leaf struct {
	err  *jsonschema.ValidationError
	path []string // instance location
}

// leaves are the errors that name a failed keyword, not a group of them.
func leaves(e *jsonschema.ValidationError, out []leaf) []leaf {
	if _, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		return append(out, leaf{e, nil})
	}
	if len(e.Causes) == 0 {
		return append(out, leaf{e, e.InstanceLocation})
	}
	for _, c := range e.Causes {
		out = leaves(c, out)
	}
	return out
}

// explain turns one validation error into an Error that says what to write.
func (t *tree) explain(cs *compiledSchema, e *jsonschema.ValidationError, path []string) {
	l := t.locs[strings.Join(path, "\x00")]
	at := l.val
	subject := label(path)
	var msg string
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		known := knownKeys(cs.doc, e.SchemaURL)
		for _, p := range k.Properties {
			pl := t.locs[strings.Join(append(path[:len(path):len(path)], p), "\x00")]
			t.errorf(pl.key, "%s%s", prefix(path, "unknown key %q", p), hint(p, known))
		}
		return
	case *kind.Required:
		at = keyOr(l)
		for _, m := range k.Missing {
			t.errorf(at, "%s is missing %q", orManifest(subject), m)
		}
		return
	case *kind.Type:
		msg = fmt.Sprintf("%s must be %s, not %s", orManifest(subject), typeWords(k.Want), typeWord(k.Got))
		if strings.HasSuffix(e.SchemaURL, "/$defs/duration") && l.val != nil && (k.Got == "number" || k.Got == "integer") {
			// initial: 8 is a YAML number: say which unit it lacks.
			msg = fmt.Sprintf("%s %s is a number, not a duration: write it with a unit, like %ss (or %sms)", subject, l.val.Value, l.val.Value, l.val.Value)
		}
	case *kind.Enum:
		msg = fmt.Sprintf("%s %s is not one of %s%s", subject, show(k.Got), joinAny(k.Want), DidYouMean(fmt.Sprint(k.Got), anyStrings(k.Want)))
	case *kind.Const:
		msg = fmt.Sprintf("%s must be %s, not %s", subject, show(k.Want), show(t.valueAt(l)))
	case *kind.Pattern:
		msg = t.patternMessage(e, path, k)
	case *kind.PropertyNames:
		// The library's instance location of a propertyNames error is not
		// reliable; the only propertyNames of the schema is a queue's
		// arguments, so find the key there.
		for p, l := range t.locs {
			if parts := strings.Split(p, "\x00"); len(parts) == 4 && parts[0] == "queues" && parts[2] == "arguments" && parts[3] == k.Property {
				t.errorf(l.key, "%s: argument %q is not an x-argument: queue arguments start with x- (e.g. x-max-length)", label(parts[:2]), k.Property)
			}
		}
		return
	case *kind.Minimum:
		if path[len(path)-1] == "delivery_limit" {
			// -1 is the one value people reach for, and it is the trap.
			msg = fmt.Sprintf("%s %s must be at least 1: -1 means unlimited on RabbitMQ 4 but drops a message after its first delivery on 3.10; write a positive limit, or remove it for the default", subject, k.Got.RatString())
			break
		}
		msg = fmt.Sprintf("%s: %s", orManifest(subject), e.ErrorKind.LocalizedString(printer))
	case *kind.MinLength:
		msg = fmt.Sprintf("%s must not be empty", subject)
	case *kind.MinProperties:
		msg = fmt.Sprintf("%s must not be empty", subject)
	case *kind.UniqueItems:
		msg = fmt.Sprintf("%s lists the same value twice (items %d and %d)", subject, k.Duplicates[0]+1, k.Duplicates[1]+1)
	default:
		msg = fmt.Sprintf("%s: %s", orManifest(subject), e.ErrorKind.LocalizedString(printer))
	}
	t.errorf(at, "%s", msg)
}

func (t *tree) patternMessage(e *jsonschema.ValidationError, path []string, k *kind.Pattern) string {
	subject := label(path)
	switch {
	case strings.HasSuffix(e.SchemaURL, "/$defs/duration"):
		return fmt.Sprintf("%s %q is not a duration: write a number and a unit, like 500ms, 30s, 10m or 1h", subject, k.Got)
	case strings.HasSuffix(e.SchemaURL, "/$defs/packageName"):
		return fmt.Sprintf("package %q is not a Go package name: use lower-case letters, digits and _ (e.g. orders)", k.Got)
	}
	return fmt.Sprintf("%s %q does not match %s", subject, k.Got, k.Want)
}

func (t *tree) valueAt(l loc) any {
	if l.val == nil {
		return nil
	}
	return scalar(l.val)
}

func keyOr(l loc) *yaml.Node {
	if l.key != nil {
		return l.key
	}
	return l.val
}

// sections name the entities of each top-level key, for messages.
var sections = map[string]string{
	"policies": "policy", "messages": "message", "exchanges": "exchange",
	"queues": "queue", "publishers": "publisher",
}

// label names the value at path: `queue "orders.new": bindings[0].exchange`.
func label(path []string) string {
	entity, rest := "", path
	if len(path) >= 2 && sections[path[0]] != "" {
		entity, rest = fmt.Sprintf("%s %q", sections[path[0]], path[1]), path[2:]
	}
	field := fieldName(rest)
	switch {
	case entity == "":
		return field
	case field == "":
		return entity
	}
	return entity + ": " + field
}

// prefix formats msg for the object at path: entity first, then where.
func prefix(path []string, format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	entity, rest := "", path
	if len(path) >= 2 && sections[path[0]] != "" {
		entity, rest = fmt.Sprintf("%s %q", sections[path[0]], path[1]), path[2:]
	}
	if f := fieldName(rest); f != "" {
		msg += " in " + f
	}
	if entity != "" {
		msg = entity + ": " + msg
	}
	return msg
}

func fieldName(rest []string) string {
	var b strings.Builder
	for i, p := range rest {
		if _, err := strconv.Atoi(p); err == nil && i > 0 {
			fmt.Fprintf(&b, "[%s]", p)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func orManifest(s string) string {
	if s == "" {
		return "the manifest"
	}
	return s
}

func hint(got string, known []string) string {
	if s := DidYouMean(got, known); s != "" {
		return s
	}
	if len(known) > 0 {
		return "; known keys: " + strings.Join(known, ", ")
	}
	return ""
}

var typeNames = map[string]string{
	"object": "a mapping", "array": "a list", "string": "a string", "integer": "a whole number",
	"number": "a number", "boolean": "true or false", "null": "empty",
}

func typeWord(t string) string {
	if w, ok := typeNames[t]; ok {
		return w
	}
	return t
}

func typeWords(ts []string) string {
	words := make([]string, len(ts))
	for i, t := range ts {
		words[i] = typeWord(t)
	}
	return strings.Join(words, " or ")
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func joinAny(vs []any) string {
	return strings.Join(anyStrings(vs), ", ")
}

func anyStrings(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// knownKeys are the properties declared by the schema object at
// schemaURL (the one whose additionalProperties failed), sorted.
func knownKeys(doc any, schemaURL string) []string {
	_, frag, ok := strings.Cut(schemaURL, "#")
	if !ok {
		return nil
	}
	node := doc
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[tok]
	}
	m, _ := node.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
