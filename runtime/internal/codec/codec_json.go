package codec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// jsonMessages prints the validator's messages in English.
var jsonMessages = message.NewPrinter(language.English)

// jsonSchemaURL is the address the message's schema is compiled under. It
// is never fetched: the codec's loader refuses every external document.
const jsonSchemaURL = "acemq:///message.schema.json"

// jsonCodec is the application/json codec, optionally validated.
type jsonCodec struct {
	schema *jsonschema.Schema // nil: no validation
	// check is the generated check of the message type (nil: none, or
	// WithReferenceValidation): a value it passes is valid without the
	// reference validator; anything else is validated by the reference.
	check jsoncheck.Checker
	// shape is the check's decode shape (nil: decode with the reference).
	shape *jsoncheck.Shape
	// enc is the generated encoder of the message type (nil: none):
	// Encode's json.Marshal without reflection (marshal).
	enc jsoncheck.Encoder
	// dec is the generated decoder of the message type (nil: none), tried
	// before DecodeChecked when there is a shape: json.Unmarshal's value
	// and the shape's scan in one pass (jsoncheck.DecodeFast).
	dec jsoncheck.DecodeFunc
}

// NewJSONCodec returns the application/json codec validating against
// schema, a JSON Schema document given as text; an empty schema means no
// validation. The schema is compiled once, here: a schema that is not JSON
// or does not compile is an error, never a panic. The draft is the one its
// $schema names (draft 4, 6, 7, 2019-09, 2020-12), 2020-12 when it names
// none. `format` is asserted in every draft (date-time, date, uuid, email,
// ipv4, ...). The schema must be self-contained: $ref may point inside it
// ($defs, definitions, $id'd subschemas) but never to a file or URL, which
// the codec does not load.
//
// Encode is json.Marshal, then validation: a value that breaks the schema
// is an error wrapping core.ErrInvalidMessage and a *SchemaError. Decode refuses
// a body that is not JSON ("this message is not JSON: ..."), then one that
// breaks the schema (a *SchemaError, "<where>: <what>"), then unmarshals
// into v. The codec is safe for concurrent use and ignores ctx.
//
// Validation is santhosh-tekuri/jsonschema's (the reference validator)
// and nothing else: the body is parsed into the tree the validator takes
// and validated, so verdicts and error texts are the validator's. That is
// the slow path (docs/codecs.md gives its cost); a message type with
// generated code (acemq-gen's checks, encoder and decoder) passes what its
// generated check shows valid without building the tree.
func NewJSONCodec(schema string) (msgtype.Codec, error) {
	if strings.TrimSpace(schema) == "" {
		return &jsonCodec{}, nil
	}
	sch, err := jsonCompile(schema)
	if err != nil {
		return nil, err
	}
	return &jsonCodec{schema: sch}, nil
}

// NewJSONCodecChecked is NewJSONCodec with a generated check: Encode
// validates with check first and asks the reference validator only when
// check does not pass the value.
func NewJSONCodecChecked(schema string, check jsoncheck.Checker, shape *jsoncheck.Shape) (msgtype.Codec, error) {
	c, err := NewJSONCodec(schema)
	if err != nil {
		return nil, err
	}
	if jc := c.(*jsonCodec); jc.schema != nil && check != nil {
		jc.check, jc.shape = check, shape
	}
	return c, nil
}

// jsonCompile compiles one self-contained schema document.
func jsonCompile(schema string) (sch *jsonschema.Schema, err error) {
	defer codecRecover(&err, "JSON Schema does not compile")
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("JSON Schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(codecNoLoader{})
	if err := c.AddResource(jsonSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("JSON Schema does not compile: %w", err)
	}
	sch, err = c.Compile(jsonSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("JSON Schema does not compile: %w", err)
	}
	return sch, nil
}

// codecNoLoader refuses every document outside the schema text, so a codec
// never reads a file or the network at run time.
type codecNoLoader struct{}

func (codecNoLoader) Load(url string) (any, error) {
	url = strings.TrimPrefix(url, "acemq:///") // a relative reference
	return nil, fmt.Errorf("the schema refers to %s, which the runtime does not load: the schema must be self-contained "+
		"(bundle the documents it refers to under $defs, each keeping its $id)", url)
}

// ContentType is application/json.
func (c *jsonCodec) ContentType() string { return wire.ContentTypeJSON }

// Encode marshals v and validates the result.
func (c *jsonCodec) Encode(_ context.Context, v any) (body []byte, err error) {
	defer codecRecover(&err, "JSON codec: encoding a %T", v)
	body, err = c.marshal(v)
	if err != nil {
		return nil, fmt.Errorf("JSON codec cannot encode a %T: %w", v, err)
	}
	if c.schema == nil || c.check != nil && jsoncheck.Checked(c.check, v) {
		return body, nil
	}
	doc, err := jsonParseDoc(body)
	if err != nil { // json.Marshal wrote something it cannot read back
		return nil, fmt.Errorf("JSON codec: encoding a %T: %w", v, err)
	}
	if err := c.validate(doc); err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalidMessage, err)
	}
	return body, nil
}

// Decode checks body is JSON, validates it, and unmarshals it into v. The
// body is unmarshalled into v once: with a generated check, the value the
// check did not pass is kept when the reference validator passes the body
// (v is zeroed when it does not). With a generated decoder too, that
// decoder reads the body first; what it does not take is DecodeChecked's.
func (c *jsonCodec) Decode(_ context.Context, body []byte, v any) (err error) {
	defer codecRecover(&err, "JSON codec: decoding into a %T", v)
	if c.shape != nil {
		decoded, passed := jsoncheck.DecodeFast(c.dec, c.check, c.shape, body, v)
		if !decoded {
			decoded, passed = jsoncheck.DecodeChecked(c.check, c.shape, body, v)
		}
		if passed {
			return nil
		}
		if decoded {
			if err := c.validateBody(body); err != nil {
				reflect.ValueOf(v).Elem().SetZero()
				return err
			}
			return nil
		}
	}
	if c.schema != nil {
		if err := c.validateBody(body); err != nil {
			return err
		}
	}
	return jsonUnmarshal(body, v)
}

// validateBody parses body (jsonParseDoc) and validates it as a document.
func (c *jsonCodec) validateBody(body []byte) error {
	doc, err := jsonParseDoc(body)
	if err != nil {
		return err
	}
	return c.validate(doc)
}

// validate checks doc (as parsed by jsonParseDoc) against the schema with
// the reference validator.
func (c *jsonCodec) validate(doc any) error {
	err := c.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	return &jsoncheck.SchemaError{Violations: jsonViolations(ve)}
}

// jsonViolations flattens a validation error tree into its leaves, sorted by
// location so the text does not depend on map order.
func jsonViolations(ve *jsonschema.ValidationError) []jsoncheck.Violation {
	var out []jsoncheck.Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, jsonLeafViolations(e)...)
	}
	walk(ve)
	slices.SortStableFunc(out, func(a, b jsoncheck.Violation) int {
		return strings.Compare(a.Location, b.Location)
	})
	return slices.Compact(out)
}

// jsonLeafViolations words one leaf error. A missing or forbidden property is
// reported at the property's own location ("/customer_id: missing
// property"), one violation per property; the rest keep the validator's
// message at the value's location.
func jsonLeafViolations(e *jsonschema.ValidationError) []jsoncheck.Violation {
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return jsonPropertyViolations(e.InstanceLocation, k.Missing, "missing property")
	case *kind.AdditionalProperties:
		return jsonPropertyViolations(e.InstanceLocation, k.Properties, "property not allowed (additionalProperties)")
	}
	return []jsoncheck.Violation{{Location: jsonPointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(jsonMessages)}}
}

func jsonPropertyViolations(at []string, props []string, msg string) []jsoncheck.Violation {
	out := make([]jsoncheck.Violation, 0, len(props))
	for _, p := range props {
		out = append(out, jsoncheck.Violation{Location: jsonPointer(append(slices.Clip(at), p)), Message: msg})
	}
	return out
}

// jsonPointer is the RFC 6901 pointer of tokens, "/" for the document.
func jsonPointer(tokens []string) string { return jsoncheck.Pointer(tokens) }

// jsonParse reads body as the validator wants it (numbers as json.Number)
// with encoding/json and says where it stops being JSON: the reference
// read, and the one for every body jsonParseFast leaves.
func jsonParse(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, jsonNotJSON(body, err)
	}
	end := int(dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		off := end + len(body[end:]) - len(bytes.TrimLeft(body[end:], " \t\r\n"))
		return nil, fmt.Errorf("this message is not JSON: unexpected data after the JSON value %s", jsonPlace(body, off))
	}
	return doc, nil
}

// jsonUnmarshal is json.Unmarshal with the codec's error texts.
func jsonUnmarshal(body []byte, v any) error {
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var ie *json.InvalidUnmarshalError
	switch {
	case errors.As(err, &te):
		// encoding/json names the Go path without array indices
		// ("items.qty"), so it is given as such, not as a JSON Pointer.
		where := te.Field
		if where == "" {
			where = "the document"
		}
		return fmt.Errorf("%s: a JSON %s does not fit the Go type %s", where, te.Value, te.Type)
	case errors.As(err, &ie):
		return fmt.Errorf("JSON codec cannot decode into a %T: want a non-nil pointer", v)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		return jsonNotJSON(body, err)
	}
	return fmt.Errorf("JSON codec: decoding into a %T: %w", v, err)
}

// jsonNotJSON words a syntax error with where it happened.
func jsonNotJSON(body []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return errors.New("this message is not JSON: the body is empty")
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.As(err, &se) && se.Error() == "unexpected end of JSON input":
		return fmt.Errorf("this message is not JSON: it ends too early %s", jsonPlace(body, len(body)))
	case errors.As(err, &se):
		// The offset is just past the offending byte.
		return fmt.Errorf("this message is not JSON: %s %s", se.Error(), jsonPlace(body, int(se.Offset)-1))
	}
	return fmt.Errorf("this message is not JSON: %w", err)
}

// jsonPlace is "at offset N (line L, column C)" for a 0-based byte offset.
func jsonPlace(body []byte, off int) string {
	off = max(0, min(off, len(body)))
	line := 1 + bytes.Count(body[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(body[:off], '\n')
	return fmt.Sprintf("at offset %d (line %d, column %d)", off, line, col)
}
