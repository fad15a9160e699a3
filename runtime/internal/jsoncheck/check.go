// Package jsoncheck is the implementation of the JSON checks acemq-gen
// generates: the Check a generated check reports to, the Shape a decode
// check scans a body with, and the reference validator's formats. Package
// runtime's JSON codec runs them; generated code reaches them through the
// runtime/acemqimpl facade, which aliases these types.
package jsoncheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	segjson "github.com/segmentio/encoding/json"
)

// Checker is a generated check of a typed value against the JSON Schema
// of its message type, in plain Go: it reports to c every violation that
// validating json.Marshal(v) would find, and returns false when v is not of
// the type it checks (the codec then validates the marshalled document, as
// for a type without a check). acemq-gen emits one per message type whose
// schema uses only keywords it can check (docs/schema-mapping.md); the
// codec trusts a check that finds nothing and asks the reference validator
// (santhosh-tekuri/jsonschema) about everything else, so an error's text is
// always the reference's.
type Checker func(v any, c *Check) bool

// Check collects what a generated check finds. The zero value is ready
// to use; a generated check only calls Fail and Undecided.
type Check struct {
	violations []Violation
	undecided  bool
	decoding   bool
	// textValid: the value's strings were read by a generated decoder,
	// which takes only UTF-8 text (DecodeFast).
	textValid bool
	// keyed: the scan met a key it could not match as encoding/json does
	// (escaped, or matched only by its case folding), which
	// segmentio/encoding may have read otherwise.
	keyed    bool
	scanPath []scanTok // the decode scan's path buffer, kept with the pooled check
}

// At is a location in the document a generated check walks: member
// Key of Up, or its element Index when Item is set. A nil *At is the
// document itself. Generated code builds them on the stack; Fail copies
// what it needs.
type At struct {
	Up    *At
	Key   string
	Index int
	Item  bool
}

// Fail records a violation at at.
func (c *Check) Fail(at *At, msg string) {
	c.violations = append(c.violations, Violation{Location: at.pointer(), Message: msg})
}

// Count is how many violations the check has found so far.
func (c *Check) Count() int { return len(c.violations) }

// Undecided says the check cannot tell for this value (a string that is
// not UTF-8, which encoding/json rewrites): the reference validator
// decides.
func (c *Check) Undecided() { c.undecided = true }

// Decoded says the value was decoded from a body (json.Unmarshal into a
// zero value), not about to be encoded: an empty slice or map then means
// the member was there, and a float64 equal to a bound may stand for a
// number just beside it.
func (c *Check) Decoded() bool { return c.decoding }

// TextValid says the value's strings are known to be UTF-8: the
// generated decoder read them from the body, and it takes no string with
// a byte that is not (encoding/json's U+FFFD rewrite cannot have happened).
// A generated check then need not test them again.
func (c *Check) TextValid() bool { return c.textValid }

// Passed says the check found nothing and was not undecided.
func (c *Check) Passed() bool { return len(c.violations) == 0 && !c.undecided }

// IsUndecided reports whether the check left the verdict to the reference.
func (c *Check) IsUndecided() bool { return c.undecided }

// Err is nil when the check found nothing, else a *SchemaError
// (runtime.SchemaError) with what it found, sorted by location as the
// codec sorts the reference's.
func (c *Check) Err() error {
	if len(c.violations) == 0 {
		return nil
	}
	out := slices.Clone(c.violations)
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Location, b.Location) })
	return &SchemaError{Violations: slices.Compact(out)}
}

func (c *Check) reset() {
	c.violations = c.violations[:0]
	c.undecided = false
	c.decoding = false
	c.textValid = false
	c.keyed = false
}

// pointer is the RFC 6901 pointer of at, "/" for the document.
func (at *At) pointer() string {
	var tokens []string
	for a := at; a != nil; a = a.Up {
		if a.Item {
			tokens = append(tokens, strconv.Itoa(a.Index))
		} else {
			// A copy, so that no *At leaks: generated checks keep
			// theirs on the stack.
			tokens = append(tokens, strings.Clone(a.Key))
		}
	}
	slices.Reverse(tokens)
	return Pointer(tokens)
}

var checkPool = sync.Pool{New: func() any { return new(Check) }}

// Checked runs check on v: true when it finds nothing and was sure.
func Checked(check Checker, v any) bool {
	c := checkPool.Get().(*Check)
	ok := check(v, c) && c.Passed()
	c.reset()
	checkPool.Put(c)
	return ok
}

// DecodeChecked decodes body into v (a pointer to the checked type)
// and checks it: json.Unmarshal into the zero value (unmarshal), the shape's scan of
// the body for what the struct cannot show, then the check. decoded says
// json.Unmarshal succeeded (otherwise v is zeroed again); passed says the
// scan and the check found nothing and were sure. A decoded value that did
// not pass is left as json.Unmarshal made it: the codec asks the reference
// validator about the body and keeps v if the reference passes it, so the
// body is unmarshalled once whatever the verdict.
func DecodeChecked(check Checker, shape *Shape, body []byte, v any) (decoded, passed bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false, false
	}
	rv.Elem().SetZero()
	if !unmarshal(body, rv) {
		return false, false
	}
	c := checkPool.Get().(*Check)
	Scan(c, body, shape)
	if c.keyed && !reunmarshal(body, rv) {
		c.reset()
		checkPool.Put(c)
		return false, false
	}
	ok := c.Passed() && check(v, c) && c.Passed()
	c.reset()
	checkPool.Put(c)
	return true, ok
}

// reunmarshal is json.Unmarshal of body into the zero value rv points to,
// for a body with a key segmentio/encoding may have matched otherwise than
// encoding/json ("Sucré" to a field "sucré", which only encoding/json's
// case folding matches): false, the value zeroed, when encoding/json
// refuses it.
func reunmarshal(body []byte, rv reflect.Value) bool {
	rv.Elem().SetZero()
	if json.Unmarshal(body, rv.Interface()) != nil {
		rv.Elem().SetZero()
		return false
	}
	return true
}

// unmarshal is json.Unmarshal of body into the zero value rv points to,
// read by segmentio/encoding (about 4x faster on the bench's 1 KB order)
// and, when segmentio refuses it, by encoding/json into the zero value
// again: what segmentio takes, encoding/json takes to the same value
// (FuzzDecodeCheckedUnmarshal, TestUnmarshalIsEncodingJSONs,
// TestJSONCheckDifferential), and a body it refuses is encoding/json's to
// refuse or take. It reports whether the body was unmarshalled; the value
// is zero when not.
func unmarshal(body []byte, rv reflect.Value) bool {
	v := rv.Interface()
	if DepthAtMost(body, fastMaxDepth) && segjson.Unmarshal(body, v) == nil {
		return true
	}
	rv.Elem().SetZero()
	if json.Unmarshal(body, v) != nil {
		rv.Elem().SetZero()
		return false
	}
	return true
}

// fastMaxDepth is the deepest nesting segmentio/encoding unmarshals: its
// decode into an interface (an any field) re-scans each array and object
// once per enclosing level, so deeper bodies are encoding/json's.
const fastMaxDepth = 16

// DepthAtMost reports whether the arrays and objects of body nest no
// deeper than limit (strings skipped; a stray closing bracket is false).
// A string is skipped to its closing quote by bytes.IndexByte: a quote
// ends the string unless an odd run of backslashes precedes it, which is
// where a byte-by-byte scan that skips the byte after each backslash ends
// it too (TestDepthAtMostIsTheByteScan, FuzzDepthAtMost).
func DepthAtMost(body []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			i = stringEnd(body, i)
		case '[', '{':
			if depth++; depth > limit {
				return false
			}
		case ']', '}':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return true
}

// stringEnd is the index of the quote that closes the string opened at
// body[open], or len(body) when none does.
func stringEnd(body []byte, open int) int {
	for i := open + 1; ; {
		j := bytes.IndexByte(body[i:], '"')
		if j < 0 {
			return len(body)
		}
		i += j
		k := i - 1
		for k > open && body[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i
		}
		i++
	}
}

// Format is the reference validator's own check of a JSON Schema format
// ("uuid", "email", "date", ...), for generated checks: true when s is of
// the format. It is nil for a name the validator does not assert.
func Format(name string) func(s string) bool {
	if name == "uuid" {
		return isUUID // the same test without strings.Split and boxing (TestFormatUUIDIsTheReferences)
	}
	formatsOnce.Do(loadFormats)
	f := formats[name]
	if f == nil {
		return nil
	}
	fast := map[string]func(string) (bool, bool){"date-time": dateTimeFast, "email": emailFast}[name]
	if fast != nil {
		return func(s string) bool {
			if ok, sure := fast(s); sure {
				return ok
			}
			return f.Validate(s) == nil
		}
	}
	return func(s string) bool { return f.Validate(s) == nil }
}

// formatNames are the formats santhosh-tekuri/jsonschema v6 asserts
// (its format.go), each taken from a compiled schema so that the function
// is the library's own.
var formatNames = []string{
	"json-pointer", "relative-json-pointer", "uuid", "duration", "period", "ipv4", "ipv6",
	"hostname", "email", "date", "time", "date-time", "uri", "iri", "uri-reference",
	"iri-reference", "uri-template", "semver",
}

var (
	formatsOnce sync.Once
	formats     map[string]*jsonschema.Format
)

func loadFormats() {
	formats = map[string]*jsonschema.Format{}
	for _, name := range formatNames {
		sch, err := compileFormat(name)
		if err != nil || sch.Format == nil {
			continue
		}
		formats[name] = sch.Format
	}
}

// compileFormat compiles {"format": name} as the runtime's codec compiles
// a schema: draft 2020-12, formats asserted.
func compileFormat(name string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(fmt.Sprintf(`{"format": %q}`, name)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const url = "acemq:///format.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// isUUID is santhosh-tekuri/jsonschema's uuid format: five groups of
// 8, 4, 4, 4 and 12 hex digits (either case) joined by dashes.
func isUUID(s string) bool {
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

// Pointer is the RFC 6901 pointer of tokens, "/" for the document.
func Pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "/"
	}
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		sb.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return sb.String()
}
