package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var metaPrinter = message.NewPrinter(language.English)

// metaLeaf is one failed keyword of the metaschema, at a place of the
// document.
type metaLeaf struct {
	loc  []string // instance location: the tokens of the pointer into the document
	err  *jsonschema.ValidationError
	name string // a property name that broke propertyNames, else ""
}

// explainMeta turns the validation error of a document against its
// metaschema into one problem per place: the library's tree holds every
// group the metaschema is made of (its allOf of vocabularies, the $ref and
// $dynamicRef between them, an anyOf of alternatives); only its leaves say
// what is wrong, and only the deepest places are the mistakes (a place
// whose part is wrong fails as a whole too). At one place, the leaf kept is
// a keyword's own check rather than an alternative's type: "type": "strin"
// fails the enum of type names and "or an array of them"; the enum is what
// the author meant. base is the pointer of the subschema checked (""
// for the document).
func explainMeta(doc any, base string, ve *jsonschema.ValidationError) []problem {
	leaves := metaLeaves(ve, nil, nil)
	var keep []metaLeaf
	for _, l := range leaves {
		if !deeperLeaf(l, leaves) {
			keep = append(keep, l)
		}
	}
	best := map[string]metaLeaf{}
	var order []string
	for _, l := range keep {
		p := base + pointerOf(l.loc)
		prev, seen := best[p]
		if !seen {
			order = append(order, p)
		}
		if !seen || isTypeKind(prev) && !isTypeKind(l) {
			best[p] = l
		}
	}
	slices.Sort(order) // checkMetaschema puts them in the order of the text
	var out []problem
	for _, p := range order {
		l := best[p]
		construct := "schema"
		if len(l.loc) > 0 {
			construct = l.loc[len(l.loc)-1]
		}
		out = append(out, problem{ptr: "#" + p, construct: construct, msg: metaMessage(doc, l)})
	}
	return out
}

// metaLeaves lists the leaves of e's tree in order; up is the instance
// location of e's parent. A propertyNames failure is a leaf at the
// property it names; its causes say why, at no location, and its own
// location is its parent's and the keyword whose names the metaschema
// checks (the library's slice for it can have its tokens overwritten:
// [type x patternProperties] for /properties/x/patternProperties).
func metaLeaves(e *jsonschema.ValidationError, up []string, out []metaLeaf) []metaLeaf {
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		loc := append(slices.Clone(up), propertyNamesKeyword(e), k.Property)
		why := e
		if inner := metaLeaves(firstCause(e), nil, nil); len(inner) > 0 {
			why = inner[0].err
		}
		return append(out, metaLeaf{loc: loc, err: why, name: k.Property})
	}
	if len(e.Causes) == 0 {
		return append(out, metaLeaf{loc: e.InstanceLocation, err: e})
	}
	for _, c := range e.Causes {
		out = metaLeaves(c, e.InstanceLocation, out)
	}
	return out
}

// propertyNamesKeyword is the keyword of the metaschema's
// .../properties/<keyword>/propertyNames that e failed.
func propertyNamesKeyword(e *jsonschema.ValidationError) string {
	if rest, ok := strings.CutSuffix(e.SchemaURL, "/propertyNames"); ok {
		if i := strings.LastIndex(rest, "/properties/"); i >= 0 {
			return rest[i+len("/properties/"):]
		}
	}
	if n := len(e.InstanceLocation); n > 0 {
		return e.InstanceLocation[n-1]
	}
	return ""
}

func firstCause(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return e
	}
	return e.Causes[0]
}

// deeperLeaf says another leaf is inside l's place.
func deeperLeaf(l metaLeaf, all []metaLeaf) bool {
	for _, o := range all {
		if len(o.loc) > len(l.loc) && slices.Equal(o.loc[:len(l.loc)], l.loc) {
			return true
		}
	}
	return false
}

func isTypeKind(l metaLeaf) bool {
	_, ok := l.err.ErrorKind.(*kind.Type)
	return ok
}

// pointerOf is the JSON pointer of tokens ("" for none).
func pointerOf(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

// metaMessage says what is wrong with the value at l: what the keyword
// must be, and what it is.
func metaMessage(doc any, l metaLeaf) string {
	if l.name != "" {
		return fmt.Sprintf("the property name %q %s", l.name, nameMessage(l.err))
	}
	got := describeValue(valueAt(doc, l.loc))
	switch k := l.err.ErrorKind.(type) {
	case *kind.Type:
		if slices.Equal(k.Want, []string{"boolean", "object"}) {
			return fmt.Sprintf("must be a schema (an object or a boolean), got %s", got)
		}
		return fmt.Sprintf("must be %s, got %s", typeWords(k.Want), got)
	case *kind.Enum:
		var want []string
		var strs []string
		for _, w := range k.Want {
			want = append(want, jsonText(w))
			if s, ok := w.(string); ok {
				strs = append(strs, s)
			}
		}
		hint := ""
		if s, ok := k.Got.(string); ok {
			hint = manifest.DidYouMean(s, strs)
		}
		return fmt.Sprintf("must be one of %s, got %s%s", strings.Join(want, ", "), got, hint)
	case *kind.Format:
		return formatMessage(k, got)
	case *kind.Minimum:
		return fmt.Sprintf("must be at least %s, got %s", k.Want.RatString(), got)
	case *kind.UniqueItems:
		return fmt.Sprintf("must list each value once, got %s twice (at %d and %d)", describeValue(valueAt(doc, append(slices.Clip(l.loc), fmt.Sprint(k.Duplicates[0])))), k.Duplicates[0], k.Duplicates[1])
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got)
	case *kind.FalseSchema:
		return "is not allowed here"
	}
	return l.err.ErrorKind.LocalizedString(metaPrinter)
}

// nameMessage says why a property name breaks propertyNames.
func nameMessage(e *jsonschema.ValidationError) string {
	if k, ok := e.ErrorKind.(*kind.Format); ok && k.Want == "regex" {
		return fmt.Sprintf("is not a regular expression Go's regexp accepts (RE2 syntax: no look-around, no backreferences): %s", regexpError(k.Err))
	}
	return e.ErrorKind.LocalizedString(metaPrinter)
}

func formatMessage(k *kind.Format, got string) string {
	if k.Want == "regex" {
		return fmt.Sprintf("must be a regular expression Go's regexp accepts (RE2 syntax: no look-around, no backreferences), got %s: %s", got, regexpError(k.Err))
	}
	if k.Err != nil {
		return fmt.Sprintf("must be a valid %s, got %s: %v", k.Want, got, k.Err)
	}
	return fmt.Sprintf("must be a valid %s, got %s", k.Want, got)
}

// regexpError is what regexp says of a pattern, without its "error parsing
// regexp: " prefix.
func regexpError(err error) string {
	if err == nil {
		return "it does not compile"
	}
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// valueAt follows tokens into doc (a value of jsonschema.UnmarshalJSON);
// nil when there is nothing there.
func valueAt(doc any, tokens []string) any {
	v := doc
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			var i int
			if _, err := fmt.Sscan(t, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// describeValue names a JSON value for a message: the string "500", the number
// 5, the boolean true, null, an object, an array.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "the string " + jsonText(x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return jsonText(v)
}

// jsonText is v as JSON text, < > & as they are.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// typeWords is "an integer", "a string or an array".
func typeWords(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "null":
			words[i] = "null"
		case "integer", "object", "array":
			words[i] = "an " + t
		default:
			words[i] = "a " + t
		}
	}
	if len(words) <= 2 {
		return strings.Join(words, " or ")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
