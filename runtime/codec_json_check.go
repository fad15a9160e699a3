package runtime

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// JSONChecker is a generated check of a typed value against the JSON Schema
// of its message type, in plain Go: it reports to c every violation that
// validating json.Marshal(v) would find, and returns false when v is not of
// the type it checks (the codec then validates the marshalled document, as
// for a type without a check). acemq-gen emits one per message type whose
// schema uses only keywords it can check (docs/schema-mapping.md); the
// codec trusts a check that finds nothing and asks the reference validator
// (santhosh-tekuri/jsonschema) about everything else, so an error's text is
// always the reference's.
type JSONChecker func(v any, c *JSONCheck) bool

// JSONCheck collects what a generated check finds. The zero value is ready
// to use; a generated check only calls Fail and Undecided.
type JSONCheck struct {
	violations []Violation
	undecided  bool
	decoding   bool
	scanPath   []scanTok // the decode scan's path buffer, kept with the pooled check
}

// JSONAt is a location in the document a generated check walks: member
// Key of Up, or its element Index when Item is set. A nil *JSONAt is the
// document itself. Generated code builds them on the stack; Fail copies
// what it needs.
type JSONAt struct {
	Up    *JSONAt
	Key   string
	Index int
	Item  bool
}

// Fail records a violation at at.
func (c *JSONCheck) Fail(at *JSONAt, msg string) {
	c.violations = append(c.violations, Violation{Location: at.pointer(), Message: msg})
}

// Count is how many violations the check has found so far.
func (c *JSONCheck) Count() int { return len(c.violations) }

// Undecided says the check cannot tell for this value (a string that is
// not UTF-8, which encoding/json rewrites): the reference validator
// decides.
func (c *JSONCheck) Undecided() { c.undecided = true }

// Decoded says the value was decoded from a body (json.Unmarshal into a
// zero value), not about to be encoded: an empty slice or map then means
// the member was there, and a float64 equal to a bound may stand for a
// number just beside it.
func (c *JSONCheck) Decoded() bool { return c.decoding }

// Passed says the check found nothing and was not undecided.
func (c *JSONCheck) Passed() bool { return len(c.violations) == 0 && !c.undecided }

// IsUndecided reports whether the check left the verdict to the reference.
func (c *JSONCheck) IsUndecided() bool { return c.undecided }

// Err is nil when the check found nothing, else a *SchemaError with what
// it found, sorted by location as the codec sorts the reference's.
func (c *JSONCheck) Err() error {
	if len(c.violations) == 0 {
		return nil
	}
	out := slices.Clone(c.violations)
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Location, b.Location) })
	return &SchemaError{Violations: slices.Compact(out)}
}

func (c *JSONCheck) reset() {
	c.violations = c.violations[:0]
	c.undecided = false
	c.decoding = false
}

// pointer is the RFC 6901 pointer of at, "/" for the document.
func (at *JSONAt) pointer() string {
	var tokens []string
	for a := at; a != nil; a = a.Up {
		if a.Item {
			tokens = append(tokens, strconv.Itoa(a.Index))
		} else {
			// A copy, so that no *JSONAt leaks: generated checks keep
			// theirs on the stack.
			tokens = append(tokens, strings.Clone(a.Key))
		}
	}
	slices.Reverse(tokens)
	return jsonPointer(tokens)
}

var jsonCheckPool = sync.Pool{New: func() any { return new(JSONCheck) }}

// jsonChecked runs check on v: true when it finds nothing and was sure.
func jsonChecked(check JSONChecker, v any) bool {
	c := jsonCheckPool.Get().(*JSONCheck)
	ok := check(v, c) && c.Passed()
	c.reset()
	jsonCheckPool.Put(c)
	return ok
}

// jsonDecodeChecked decodes body into v (a pointer to the checked type)
// and checks it: json.Unmarshal into the zero value, the shape's scan of
// the body for what the struct cannot show, then the check. True when all
// pass; otherwise v is zeroed again and the reference decides.
func jsonDecodeChecked(check JSONChecker, shape *JSONShape, body []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	rv.Elem().SetZero()
	if json.Unmarshal(body, v) != nil {
		rv.Elem().SetZero()
		return false
	}
	c := jsonCheckPool.Get().(*JSONCheck)
	c.decoding = true
	s := jsonScan{b: body, c: c, path: c.scanPath[:0]}
	s.value(shape)
	c.scanPath = s.path[:0]
	ok := c.Passed() && check(v, c) && c.Passed()
	c.reset()
	jsonCheckPool.Put(c)
	if !ok {
		rv.Elem().SetZero()
	}
	return ok
}

// JSONFormat is the reference validator's own check of a JSON Schema
// format ("uuid", "email", "date", ...), for generated checks: true when s
// is of the format. It is nil for a name the validator does not assert.
func JSONFormat(name string) func(s string) bool {
	if name == "uuid" {
		return jsonIsUUID // the same test without strings.Split and boxing (TestJSONFormatUUIDIsTheReferences)
	}
	jsonFormatsOnce.Do(jsonLoadFormats)
	f := jsonFormats[name]
	if f == nil {
		return nil
	}
	return func(s string) bool { return f.Validate(s) == nil }
}

// jsonFormatNames are the formats santhosh-tekuri/jsonschema v6 asserts
// (its format.go), each taken from a compiled schema so that the function
// is the library's own.
var jsonFormatNames = []string{
	"json-pointer", "relative-json-pointer", "uuid", "duration", "period", "ipv4", "ipv6",
	"hostname", "email", "date", "time", "date-time", "uri", "iri", "uri-reference",
	"iri-reference", "uri-template", "semver",
}

var (
	jsonFormatsOnce sync.Once
	jsonFormats     map[string]*jsonschema.Format
)

func jsonLoadFormats() {
	jsonFormats = map[string]*jsonschema.Format{}
	for _, name := range jsonFormatNames {
		sch, err := jsonCompile(fmt.Sprintf(`{"format": %q}`, name))
		if err != nil || sch.Format == nil {
			continue
		}
		jsonFormats[name] = sch.Format
	}
}

// jsonIsUUID is santhosh-tekuri/jsonschema's uuid format: five groups of
// 8, 4, 4, 4 and 12 hex digits (either case) joined by dashes.
func jsonIsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
