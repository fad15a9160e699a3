package diffall

// The differential test of the generated JSON checks (copied into the
// module TestJSONCheckDifferential writes): for each message type, valid
// instances generated from its schema and mutations of each (a required
// property dropped, a wrong type, an out-of-range number, an enum miss, a
// bad format, a pattern miss, a null) are decoded into the payload type;
// the generated check of the value and the reference validator on
// json.Marshal(value) must agree on the verdict and on the location of the
// first violation. And the generated JSON encoder of each message type
// must write json.Marshal's bytes (runEncode), its one-pass decoder
// read json.Unmarshal's value with DecodeChecked's verdict (runFastDecode).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqimpl/impltest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// tally is written, one line per message, to $ACEMQ_DIFF_OUT.
type tally struct {
	file                                             string
	docs, notGo, compared, valid, invalid, undecided int
}

func run[T any](t *testing.T, file string, mt *runtime.MessageType[T]) {
	runEncode(t, file, mt)
	var zero T
	if _, ok := impltest.GeneratedCheck(mt, zero); !ok {
		report(t, tally{file: file, docs: -1})
		return
	}
	sch := compile(t, mt.Schema())
	ref, err := runtime.NewJSONCodec(mt.Schema())
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	docs := instances(sch)
	encodeDocs(t, file, mt, docs)
	tl := tally{file: file}
	for _, doc := range docs {
		tl.docs++
		var v T
		if err := json.Unmarshal(doc, &v); err != nil {
			tl.notGo++
			continue
		}
		c, ok := impltest.GeneratedCheck(mt, v)
		if !ok {
			t.Fatalf("%s: the check does not take a %T", file, v)
		}
		if c.IsUndecided() {
			tl.undecided++
			continue
		}
		_, refErr := ref.Encode(context.Background(), v)
		var se *runtime.SchemaError
		if refErr != nil && !errors.As(refErr, &se) {
			tl.notGo++ // json.Marshal refuses it (a time out of range)
			continue
		}
		tl.compared++
		genErr := c.Err()
		body, _ := json.Marshal(v)
		switch {
		case (genErr == nil) != (refErr == nil):
			t.Errorf("%s: %s: the generated check says %v, the reference says %v", file, body, verdict(genErr), verdict(refErr))
		case genErr != nil:
			tl.invalid++
			g := genErr.(*runtime.SchemaError).Violations[0].Location
			r := se.Violations[0].Location
			if g != r {
				t.Errorf("%s: %s: the first violation is at %s for the generated check (%v), at %s for the reference (%v)", file, body, g, genErr, r, refErr)
			}
		default:
			tl.valid++
		}
	}
	report(t, tl)
	runDecode(t, file, mt, ref, docs)
	runFastDecode(t, file, mt, docs)
}

// runFastDecode compares the message type's generated one-pass decoder
// with json.Unmarshal and the decode check, and its codec with the
// reference codec (decodetest_test.go, a copy of internal/decodetest), on
// the generated instances and their mutations; a golden case's decoder
// must take some of them.
func runFastDecode[T any](t *testing.T, file string, mt *runtime.MessageType[T], docs [][]byte) {
	if _, _, _, has := impltest.GeneratedDecode(mt, nil); !has {
		report(t, tally{file: file + " (one-pass decode)", docs: -1})
		return
	}
	tookValid, tookMutated, mutated := Differential(t, mt, docs, 1)
	report(t, tally{file: file + " (one-pass decode)", docs: len(docs) + mutated, compared: tookValid + tookMutated})
	if strings.HasPrefix(file, "golden/") && tookValid+tookMutated == 0 {
		t.Errorf("%s: the decoder took none of %d documents and %d mutations", file, len(docs), mutated)
	}
}

// runEncode compares the message type's generated encoder with
// json.Marshal (encodetest_test.go, a copy of internal/encodetest) on 500
// random values; a golden case's struct payload must have an encoder.
func runEncode[T any](t *testing.T, file string, mt *runtime.MessageType[T]) {
	wrote := RandomEncodes(t, mt, 500, 1)
	var zero T
	if k := reflect.TypeOf(zero); strings.HasPrefix(file, "golden/") && k != nil && k.Kind() == reflect.Struct && wrote < 100 {
		t.Errorf("%s: the encoder wrote %d of 500 random values (-1: there is none); the comparison is too thin", file, wrote)
	}
}

// encodeDocs compares the encoder with json.Marshal on the values the
// generated instances and their mutations decode to.
func encodeDocs[T any](t *testing.T, file string, mt *runtime.MessageType[T], docs [][]byte) {
	took := 0
	for _, doc := range docs {
		var v T
		if json.Unmarshal(doc, &v) == nil {
			if ok, _ := EncodeIsMarshal(t, mt, v); ok {
				took++
			}
		}
	}
	if strings.HasPrefix(file, "golden/") && took == 0 {
		t.Errorf("%s: the encoder wrote none of %d instances", file, len(docs))
	}
}

// runDecode compares, for each document the Go type can hold, the decode
// check (scan and generated check of the unmarshalled value) with the
// reference's decode.
func runDecode[T any](t *testing.T, file string, mt *runtime.MessageType[T], ref runtime.Codec, docs [][]byte) {
	tl := tally{file: file + " (decode)"}
	if _, ok := impltest.GeneratedDecodeCheck(mt, []byte("{}")); !ok {
		var v T
		if json.Unmarshal([]byte("{}"), &v) == nil {
			report(t, tally{file: tl.file, docs: -1})
			return
		}
	}
	checked, err := mt.Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		tl.docs++
		c, ok := impltest.GeneratedDecodeCheck(mt, doc)
		if !ok {
			tl.notGo++
			continue
		}
		if c.IsUndecided() {
			tl.undecided++
			continue
		}
		var rv T
		refErr := ref.Decode(context.Background(), doc, &rv)
		var se *runtime.SchemaError
		if refErr != nil && !errors.As(refErr, &se) {
			t.Errorf("%s: %s: json.Unmarshal took it, the reference's decode did not: %v", file, doc, refErr)
			continue
		}
		tl.compared++
		genErr := c.Err()
		switch {
		case (genErr == nil) != (refErr == nil):
			t.Errorf("%s: decode %s: the generated check says %v, the reference says %v", file, doc, verdict(genErr), verdict(refErr))
		case genErr != nil:
			tl.invalid++
			g := genErr.(*runtime.SchemaError).Violations[0].Location
			r := se.Violations[0].Location
			if g != r {
				t.Errorf("%s: decode %s: the first violation is at %s for the generated check (%v), at %s for the reference (%v)", file, doc, g, genErr, r, refErr)
			}
		default:
			tl.valid++
			// The checked codec decodes it without the reference, to the
			// same value.
			var cv T
			if err := checked.Decode(context.Background(), doc, &cv); err != nil {
				t.Errorf("%s: decode %s: the checked codec refused a valid body: %v", file, doc, err)
			} else if !reflect.DeepEqual(cv, rv) {
				t.Errorf("%s: decode %s: the checked codec gave %+v, the reference path %+v", file, doc, cv, rv)
			}
		}
	}
	report(t, tl)
}

func verdict(err error) string {
	if err == nil {
		return "valid"
	}
	return "invalid (" + err.Error() + ")"
}

func report(t *testing.T, tl tally) {
	line := fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d\t%d\n", tl.file, tl.docs, tl.notGo, tl.compared, tl.valid, tl.invalid, tl.undecided)
	if out := os.Getenv("ACEMQ_DIFF_OUT"); out != "" {
		f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, _ = f.WriteString(line)
	}
}

func compile(t *testing.T, text string) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("acemq:///message.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("acemq:///message.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// instances are a generated instance of s and mutations of it.
func instances(s *jsonschema.Schema) [][]byte {
	var out [][]byte
	add := func(v any) {
		b, err := json.Marshal(v)
		if err == nil {
			out = append(out, b)
		}
	}
	for _, full := range []bool{true, false} {
		v := gen(s, 0, full)
		add(v)
		for _, m := range mutations(s, v, 0) {
			add(m)
		}
	}
	// Bodies only a decoder sees: a key in another case, a key twice,
	// escapes, a body that is not an object, trailing data.
	if len(out) > 0 {
		first := out[0]
		var obj map[string]json.RawMessage
		if json.Unmarshal(first, &obj) == nil {
			for k, v := range obj {
				up := strings.ToUpper(k)
				if up == k {
					continue
				}
				c := map[string]json.RawMessage{}
				for k2, v2 := range obj {
					c[k2] = v2
				}
				c[up] = v
				add(c)
				delete(c, k)
				add(c)
				break
			}
			if len(first) > 2 {
				out = append(out, []byte(`{"\u0069d":1,`+string(first[1:])))
				out = append(out, append(append([]byte{}, first[:len(first)-1]...), []byte(`,"zz":null}`)...))
			}
		}
		out = append(out, []byte("null"), []byte("[]"), []byte(`"x"`), append(append([]byte{}, first...), " "...))
	}
	return out
}

// resolve follows $ref and takes the first branch of a combinator.
func resolve(s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s != nil && i < 20; i++ {
		switch {
		case s.Ref != nil && s.Types == nil && s.Properties == nil:
			s = s.Ref
		case s.Types == nil && s.Properties == nil && len(s.AllOf) == 1:
			s = s.AllOf[0]
		case s.Types == nil && s.Properties == nil && len(s.AnyOf)+len(s.OneOf) > 0:
			branches := append(append([]*jsonschema.Schema{}, s.AnyOf...), s.OneOf...)
			next := branches[0]
			for _, b := range branches {
				if ts := types(resolveOnce(b)); !(len(ts) == 1 && ts[0] == "null") {
					next = b
					break
				}
			}
			s = next
		default:
			return s
		}
	}
	return s
}

func resolveOnce(s *jsonschema.Schema) *jsonschema.Schema {
	if s.Ref != nil && s.Types == nil {
		return s.Ref
	}
	return s
}

func types(s *jsonschema.Schema) []string {
	if s.Types == nil {
		return nil
	}
	return s.Types.ToStrings()
}

// gen is a value of s: every property when full, else the required ones.
func gen(s *jsonschema.Schema, depth int, full bool) any {
	s = resolve(s)
	if s == nil || depth > 8 {
		return nil
	}
	if s.Const != nil {
		return *s.Const
	}
	if s.Enum != nil && len(s.Enum.Values) > 0 {
		return s.Enum.Values[0]
	}
	if len(s.Examples) > 0 {
		return s.Examples[0]
	}
	ts := types(s)
	typ := ""
	for _, x := range ts {
		if x != "null" {
			typ = x
			break
		}
	}
	if typ == "" {
		switch {
		case s.Properties != nil || s.Required != nil:
			typ = "object"
		case s.Items2020 != nil || s.Items != nil:
			typ = "array"
		case s.Format != nil || s.Pattern != nil || s.MinLength != nil:
			typ = "string"
		case len(ts) == 1:
			return nil
		default:
			return map[string]any{}
		}
	}
	switch typ {
	case "object":
		obj := map[string]any{}
		for _, name := range sortedKeys(s.Properties) {
			if full || slices.Contains(s.Required, name) {
				obj[name] = gen(s.Properties[name], depth+1, full)
			}
		}
		for _, r := range s.Required {
			if _, ok := obj[r]; !ok {
				obj[r] = "x"
			}
		}
		return obj
	case "array":
		item := s.Items2020
		if it, ok := s.Items.(*jsonschema.Schema); ok {
			item = it
		}
		n := 1
		if s.MinItems != nil && *s.MinItems > n {
			n = *s.MinItems
		}
		arr := []any{}
		for range n {
			if item == nil {
				arr = append(arr, "x")
			} else {
				arr = append(arr, gen(item, depth+1, full))
			}
		}
		return arr
	case "string":
		return sampleString(s)
	case "integer":
		return json.Number(bound(s, true))
	case "number":
		return json.Number(bound(s, false))
	case "boolean":
		return true
	}
	return nil
}

var formatSamples = map[string]string{
	"uuid": "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", "date-time": "2026-11-30T06:00:00Z", "date": "2026-11-30",
	"time": "06:00:00Z", "email": "ada@example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1",
	"uri": "https://example.com/a", "uri-reference": "/a/b", "iri": "https://example.com/a",
	"iri-reference": "/a", "hostname": "example.com", "duration": "P1D", "uri-template": "/a/{b}",
	"json-pointer": "/a/b", "relative-json-pointer": "0/a", "semver": "1.2.3", "period": "2026-01-01T00:00:00Z/P1D",
}

func sampleString(s *jsonschema.Schema) string {
	if s.Format != nil {
		if v, ok := formatSamples[s.Format.Name]; ok {
			return v
		}
	}
	str := "abc"
	if s.Pattern != nil {
		for _, c := range []string{"ABC-1", "ABC", "abc", "a", "1", "A1", "x-1", "EUR", "sha256:00"} {
			if s.Pattern.MatchString(c) {
				str = c
				break
			}
		}
	}
	for s.MinLength != nil && len([]rune(str)) < *s.MinLength {
		str += "a"
	}
	if s.MaxLength != nil && len([]rune(str)) > *s.MaxLength {
		str = string([]rune(str)[:*s.MaxLength])
	}
	return str
}

// bound is a number inside s's bounds.
func bound(s *jsonschema.Schema, integer bool) string {
	v := big.NewRat(1, 1)
	if !integer {
		v = big.NewRat(3, 2)
	}
	if s.Minimum != nil && v.Cmp(s.Minimum) < 0 {
		v = new(big.Rat).Set(s.Minimum)
	}
	if s.ExclusiveMinimum != nil && v.Cmp(s.ExclusiveMinimum) <= 0 {
		v = new(big.Rat).Add(s.ExclusiveMinimum, big.NewRat(1, 1))
	}
	if s.Maximum != nil && v.Cmp(s.Maximum) > 0 {
		v = new(big.Rat).Set(s.Maximum)
	}
	if s.ExclusiveMaximum != nil && v.Cmp(s.ExclusiveMaximum) >= 0 {
		v = new(big.Rat).Sub(s.ExclusiveMaximum, big.NewRat(1, 1))
	}
	if s.MultipleOf != nil && s.MultipleOf.IsInt() && v.IsInt() {
		k := s.MultipleOf.Num()
		q := new(big.Int).Div(new(big.Int).Add(v.Num(), new(big.Int).Sub(k, big.NewInt(1))), k)
		v = new(big.Rat).SetInt(new(big.Int).Mul(q, k))
	}
	if v.IsInt() {
		return v.Num().String()
	}
	f, _ := v.Float64()
	return fmt.Sprint(f)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mutations of v (an instance of s): each breaks it in one place, at the
// root and in every object below it.
func mutations(s *jsonschema.Schema, v any, depth int) []any {
	s = resolve(s)
	obj, ok := v.(map[string]any)
	if s == nil || !ok || depth > 4 {
		return nil
	}
	var out []any
	with := func(name string, x any) {
		c := clone(obj)
		c[name] = x
		out = append(out, c)
	}
	for _, r := range s.Required {
		c := clone(obj)
		delete(c, r)
		out = append(out, c)
	}
	with("zz_unknown_property", "x")
	for _, name := range sortedKeys(s.Properties) {
		p := resolve(s.Properties[name])
		if p == nil {
			continue
		}
		// a wrong type, and null
		switch obj[name].(type) {
		case string:
			with(name, json.Number("12"))
		default:
			with(name, "wrong type")
		}
		with(name, nil)
		if p.Minimum != nil {
			with(name, json.Number(new(big.Rat).Sub(p.Minimum, big.NewRat(1, 2)).FloatString(3)))
			if p.Minimum.IsInt() {
				with(name, json.Number(new(big.Int).Sub(p.Minimum.Num(), big.NewInt(1)).String()))
			}
		}
		if p.Maximum != nil && p.Maximum.IsInt() {
			with(name, json.Number(new(big.Int).Add(p.Maximum.Num(), big.NewInt(1)).String()))
		}
		if p.ExclusiveMinimum != nil && p.ExclusiveMinimum.IsInt() {
			with(name, json.Number(p.ExclusiveMinimum.Num().String()))
		}
		if slices.Contains(types(p), "number") {
			// Numbers a float64 cannot tell from a bound: zero in every
			// spelling, each bound exactly, and just beside it.
			for _, n := range []string{"-0", "0.0", "0e5", "-0.0E-3", "1e-400", "-1e-400"} {
				with(name, json.Number(n))
			}
			for _, b := range []*big.Rat{p.Minimum, p.Maximum, p.ExclusiveMinimum, p.ExclusiveMaximum} {
				if b == nil {
					continue
				}
				f, _ := b.Float64()
				with(name, json.Number(fmt.Sprint(f)))
				with(name, json.Number(b.FloatString(30)))
				for _, d := range []*big.Rat{big.NewRat(1, 1e18), new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(40), nil))} {
					with(name, json.Number(new(big.Rat).Add(b, d).FloatString(40)))
					with(name, json.Number(new(big.Rat).Sub(b, d).FloatString(40)))
				}
			}
		}
		if p.Enum != nil {
			with(name, "zz-not-in-the-enum")
		}
		if p.Format != nil {
			with(name, "not-a-"+p.Format.Name)
		}
		if p.Pattern != nil {
			with(name, "!! no match !!")
		}
		if p.MinLength != nil && *p.MinLength > 0 {
			with(name, "")
		}
		if p.MaxLength != nil {
			with(name, strings.Repeat("x", *p.MaxLength+1))
		}
		if _, isArr := obj[name].([]any); isArr {
			with(name, []any{})
			with(name, []any{"wrong item", json.Number("3")})
		}
		// one level down
		switch x := obj[name].(type) {
		case map[string]any:
			for _, m := range mutations(p, x, depth+1) {
				with(name, m)
			}
		case []any:
			item := p.Items2020
			if it, ok := p.Items.(*jsonschema.Schema); ok {
				item = it
			}
			if len(x) > 0 && item != nil {
				for _, m := range mutations(item, x[0], depth+1) {
					arr := slices.Clone(x)
					arr[0] = m
					arr = append(arr, m)
					with(name, arr)
				}
			}
		}
	}
	return out
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
