package emit

import (
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/dave/jennifer/jen"
)

// checksFile emits the generated JSON Schema checks (docs/schema-mapping.md,
// "Validation"); a package without any has the file, empty, so that the
// set of generated files never depends on the schemas. Each struct with a
// schema.JSONStructCheck gets
//
//	func (v *Order) acemqCheckJSON(c *acemqimpl.JSONCheck, at *acemqimpl.JSONAt)
//
// which reports to c every violation of its schema in the value as
// encoding/json writes it; the message types of such structs are declared
// with the check (acemqimpl.JSONFuncs) and the payload gets a Validate method.
// The JSON encoders and decoders are codec.acemq.go's (codecFile).
func checksFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	if m.Types == nil {
		return f
	}
	cv := newCheckVars()
	for _, t := range m.Types.Types {
		if t.Kind == schema.Struct && t.JSONCheck != nil {
			typCheck(f, t, cv)
			f.Line()
		}
	}
	done := map[*schema.Type]bool{}
	for _, msg := range m.Messages {
		if jsonChecked(msg) && !done[msg.Root] {
			done[msg.Root] = true
			checkRoot(f, msg.Root, msg.CheckFunc, msg.VarName, msg.Type)
			f.Line()
			checkShape(f, msg.Root, msg.ShapeFunc, cv)
			f.Line()
		}
	}
	cv.emit(f)
	return f
}

const (
	utf8Pkg   = "unicode/utf8"
	regexpPkg = "regexp"
	checkName = "acemqCheckJSON"
)

// checkVars are the package-level regexps and format functions the checks
// of a file use, named in the order first used.
type checkVars struct {
	patterns map[string]string
	formats  map[string]string
	order    []jen.Code
	matchers []matcher // patterns written out as functions (pattern.go)
	regexps  int       // the patterns in order (not written out)
}

// matcher is a pattern written out as func name(s string) bool.
type matcher struct {
	name, pattern string
	plan          *patternPlan
}

func newCheckVars() *checkVars {
	return &checkVars{patterns: map[string]string{}, formats: map[string]string{}}
}

// pattern is the func deciding whether a string matches p: a matcher
// written out when p is simple enough (pattern.go), else the MatchString
// of the regexp the reference validator compiles.
func (cv *checkVars) pattern(p string) *jen.Statement {
	name, ok := cv.patterns[p]
	if !ok {
		name = fmt.Sprintf("acemqPattern%d", len(cv.patterns))
		cv.patterns[p] = name
		if plan, ok := planPattern(p); ok {
			cv.matchers = append(cv.matchers, matcher{name: name, pattern: p, plan: plan})
		} else {
			cv.order = append(cv.order, jen.Id(name).Op("=").Qual(regexpPkg, "MustCompile").Call(jen.Lit(p)))
			cv.regexps++
		}
	}
	for _, m := range cv.matchers {
		if m.name == name {
			return jen.Id(name)
		}
	}
	return jen.Id(name).Dot("MatchString")
}

func (cv *checkVars) format(f string) string {
	if name, ok := cv.formats[f]; ok {
		return name
	}
	name := "acemqFormat"
	for _, w := range strings.Split(f, "-") {
		switch w {
		case "uuid", "ipv4", "ipv6", "uri", "iri", "json":
			name += strings.ToUpper(w)
		default:
			name += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	cv.formats[f] = name
	cv.order = append(cv.order, jen.Id(name).Op("=").Add(impl("JSONFormat")).Call(jen.Lit(f)))
	return name
}

// emit declares the variables, if any, and the matchers.
func (cv *checkVars) emit(f *jen.File) {
	for _, m := range cv.matchers {
		patternFunc(f, m.name, m.pattern, m.plan)
	}
	if len(cv.order) == 0 {
		return
	}
	doc(f.Comment, "%s the generated checks use.", cv.varsWhat())
	f.Var().Defs(cv.order...)
}

// varsWhat names what the declared variables are: the patterns not
// written out, the formats, or both.
func (cv *checkVars) varsWhat() string {
	const (
		patterns = "patterns (compiled as the reference validator compiles them, RE2)"
		formats  = "formats (the reference validator's own functions)"
	)
	switch {
	case cv.regexps == 0:
		return "The " + formats
	case cv.regexps == len(cv.order):
		return "The " + patterns
	}
	return "The " + patterns + " and " + formats
}

// typCheck emits the check method of struct t.
func typCheck(f *jen.File, t *schema.Type, cv *checkVars) {
	var body []jen.Code
	for _, fc := range t.JSONCheck.Fields {
		fd := fc.Field
		loc := func() jen.Code {
			return jen.Op("&").Add(impl("JSONAt")).Values(jen.Id("Up").Op(":").Id("at"), jen.Id("Key").Op(":").Lit(fd.WireName))
		}
		body = append(body, checkValue(jen.Id("v").Dot(fd.GoName), fd.Type, fc.Value, fd.Tags.OmitEmpty, loc, 1, cv)...)
	}
	doc(f.Comment, "%s reports to c what checking v against its JSON Schema finds; at is where v is in the document encoding/json writes (nil: the root).", checkName)
	f.Func().Params(jen.Id("v").Op("*").Id(t.Name)).Id(checkName).Params(
		jen.Id("c").Op("*").Add(impl("JSONCheck")), jen.Id("at").Op("*").Add(impl("JSONAt")),
	).Block(body...)
}

// checkValue is the statements checking x, of Go type r, against v.
// omitempty says an empty x is not written at all; loc builds x's location.
func checkValue(x *jen.Statement, r *schema.TypeRef, v *schema.JSONValueCheck, omitempty bool, loc func() jen.Code, depth int, cv *checkVars) []jen.Code {
	null := func() []jen.Code {
		if v.Null {
			return nil
		}
		return []jen.Code{jen.Id("c").Dot("Fail").Call(loc(), jen.Lit("got null, want "+jsonWant(r, v)))}
	}
	switch r.Kind {
	case schema.Pointer:
		inner := checkPresent(jen.Parens(jen.Op("*").Add(x.Clone())), x.Clone(), r.Elem, v, loc, depth, cv)
		return nilCheck(x, omitempty, false, null, nullBranch(v, inner, loc, depth))
	case schema.Slice, schema.Map:
		inner := checkPresent(x.Clone(), x.Clone(), r, v, loc, depth, cv)
		return nilCheck(x, omitempty, true, null, nullBranch(v, inner, loc, depth))
	}
	return checkPresent(x, x, r, v, loc, depth, cv)
}

// nullBranch reports, under anyOf/oneOf [x, null], a violation at the
// value's own location whenever inner finds one, as the reference's null
// branch does.
func nullBranch(v *schema.JSONValueCheck, inner []jen.Code, loc func() jen.Code, depth int) []jen.Code {
	if !v.NullBranch || len(inner) == 0 {
		return inner
	}
	n := jen.Id(fmt.Sprintf("n%d", depth))
	out := append([]jen.Code{n.Clone().Op(":=").Id("c").Dot("Count").Call()}, inner...)
	return append(out, jen.If(jen.Id("c").Dot("Count").Call().Op(">").Add(n.Clone())).Block(
		jen.Id("c").Dot("Fail").Call(loc(), jen.Lit("neither the schema nor null (anyOf/oneOf)"))))
}

// nilCheck guards inner by x being set: a nil x is absent (omitempty) or
// null. An empty slice or map (hasLen) is absent too under omitempty.
func nilCheck(x *jen.Statement, omitempty, hasLen bool, null func() []jen.Code, inner []jen.Code) []jen.Code {
	var isNil []jen.Code
	if !omitempty {
		isNil = null()
	}
	cond := x.Clone().Op("!=").Nil()
	if omitempty && hasLen {
		// Encoding leaves an empty one out; a decoded one is empty
		// only when the body had it ([] or {}).
		cond = x.Clone().Op("!=").Nil().Op("&&").Parens(jen.Len(x.Clone()).Op(">").Lit(0).Op("||").Id("c").Dot("Decoded").Call())
	}
	switch {
	case len(inner) == 0 && len(isNil) == 0:
		return nil
	case len(isNil) == 0:
		return []jen.Code{jen.If(cond).Block(inner...)}
	case len(inner) == 0:
		return []jen.Code{jen.If(x.Clone().Op("==").Nil()).Block(isNil...)}
	}
	return []jen.Code{jen.If(x.Clone().Op("==").Nil()).Block(isNil...).Else().Block(inner...)}
}

// checkPresent checks a value that is written: x is it, ref an
// expression that can call a pointer method on it.
func checkPresent(x, ref *jen.Statement, r *schema.TypeRef, v *schema.JSONValueCheck, loc func() jen.Code, depth int, cv *checkVars) []jen.Code {
	fail := func(msg string) jen.Code { return jen.Id("c").Dot("Fail").Call(loc(), jen.Lit(msg)) }
	switch {
	case v.Struct != nil:
		return []jen.Code{ref.Clone().Dot(checkName).Call(jen.Id("c"), loc())}
	case r.Kind == schema.Slice:
		return checkSlice(x, r, v, loc, depth, cv)
	case r.Kind == schema.Map:
		return checkMap(x, r, v, loc, depth, cv)
	case r.Kind == schema.Named && r.Named.Kind == schema.Enum, r.Kind == schema.Builtin && r.Name == "string":
		return checkString(x, v, fail, cv)
	case r.Kind == schema.Builtin && (r.Name == "int64" || r.Name == "float64"):
		return checkNumber(x, v, r.Name == "float64", fail)
	}
	return nil
}

func checkString(x *jen.Statement, v *schema.JSONValueCheck, fail func(string) jen.Code, cv *checkVars) []jen.Code {
	var out []jen.Code
	s := jen.String().Call(x.Clone())
	if v.Enum != nil || v.Pattern != "" || v.Format != "" {
		// encoding/json writes a string that is not UTF-8 with U+FFFD
		// for each bad byte: the reference decides such a value.
		// After the generated decoder (TextValid) the text is UTF-8.
		out = append(out, jen.If(jen.Op("!").Id("c").Dot("TextValid").Call().Op("&&").Op("!").Qual(utf8Pkg, "ValidString").Call(s.Clone())).Block(jen.Id("c").Dot("Undecided").Call()))
	}
	if v.Enum != nil {
		var lits []jen.Code
		for _, e := range v.Enum {
			lits = append(lits, jen.Lit(e))
		}
		out = append(out, jen.Switch(s.Clone()).Block(
			jen.Case(lits...),
			jen.Default().Block(fail("value must be one of the enum's values")),
		))
	}
	if v.MinLength >= 0 || v.MaxLength >= 0 {
		n := jen.Qual(utf8Pkg, "RuneCountInString").Call(s.Clone())
		if v.MinLength >= 0 {
			out = append(out, jen.If(n.Clone().Op("<").Lit(v.MinLength)).Block(fail(fmt.Sprintf("minLength: want at least %d characters", v.MinLength))))
		}
		if v.MaxLength >= 0 {
			out = append(out, jen.If(n.Clone().Op(">").Lit(v.MaxLength)).Block(fail(fmt.Sprintf("maxLength: want at most %d characters", v.MaxLength))))
		}
	}
	if v.Pattern != "" {
		out = append(out, jen.If(jen.Op("!").Add(cv.pattern(v.Pattern)).Call(s.Clone())).Block(fail("does not match pattern "+v.Pattern)))
	}
	if v.Format != "" {
		out = append(out, jen.If(jen.Op("!").Id(cv.format(v.Format)).Call(s.Clone())).Block(fail("is not valid "+v.Format)))
	}
	return out
}

func checkNumber(x *jen.Statement, v *schema.JSONValueCheck, float bool, fail func(string) jen.Code) []jen.Code {
	var out []jen.Code
	// A decoded float64 equal to a bound may stand for a number just
	// beside it in the body (-1e-400 for 0): the decode shape (shapeOf)
	// checks a float64's bounds on the number's text, as the reference
	// compares them, so a float64 on an inclusive bound is decided. One
	// on an exclusive bound (1e-400 for exclusiveMinimum 0) would fail
	// below where the text passes: the reference decides it.
	if float && v.ExclusiveMinimum+v.ExclusiveMaximum != "" {
		var eq []jen.Code
		for _, b := range []string{v.ExclusiveMinimum, v.ExclusiveMaximum} {
			if b != "" {
				eq = append(eq, x.Clone().Op("==").Id(b))
			}
		}
		cond := eq[0].(*jen.Statement)
		for _, e := range eq[1:] {
			cond = cond.Op("||").Add(e)
		}
		out = append(out, jen.If(jen.Id("c").Dot("Decoded").Call().Op("&&").Parens(cond)).Block(jen.Id("c").Dot("Undecided").Call()))
	}
	for _, b := range []struct{ lit, op, kw string }{
		{v.Minimum, "<", "minimum"}, {v.Maximum, ">", "maximum"},
		{v.ExclusiveMinimum, "<=", "exclusiveMinimum"}, {v.ExclusiveMaximum, ">=", "exclusiveMaximum"},
	} {
		if b.lit != "" {
			out = append(out, jen.If(x.Clone().Op(b.op).Id(b.lit)).Block(fail(fmt.Sprintf("%s: must not be %s %s", b.kw, b.op, b.lit))))
		}
	}
	if v.MultipleOf > 0 {
		out = append(out, jen.If(x.Clone().Op("%").Lit(int(v.MultipleOf)).Op("!=").Lit(0)).Block(fail(fmt.Sprintf("multipleOf: want a multiple of %d", v.MultipleOf))))
	}
	return out
}

func checkSlice(x *jen.Statement, r *schema.TypeRef, v *schema.JSONValueCheck, loc func() jen.Code, depth int, cv *checkVars) []jen.Code {
	at := jen.Id(fmt.Sprintf("at%d", depth))
	i := jen.Id(fmt.Sprintf("i%d", depth))
	var out []jen.Code
	if v.MinItems >= 0 {
		out = append(out, jen.If(jen.Len(x.Clone()).Op("<").Lit(v.MinItems)).Block(jen.Id("c").Dot("Fail").Call(at.Clone(), jen.Lit(fmt.Sprintf("minItems: want at least %d items", v.MinItems)))))
	}
	if v.MaxItems >= 0 {
		out = append(out, jen.If(jen.Len(x.Clone()).Op(">").Lit(v.MaxItems)).Block(jen.Id("c").Dot("Fail").Call(at.Clone(), jen.Lit(fmt.Sprintf("maxItems: want at most %d items", v.MaxItems)))))
	}
	elemLoc := func() jen.Code {
		return jen.Op("&").Add(impl("JSONAt")).Values(jen.Id("Up").Op(":").Add(at.Clone()), jen.Id("Index").Op(":").Add(i.Clone()), jen.Id("Item").Op(":").True())
	}
	elem := x.Clone().Index(i.Clone())
	inner := checkValue(elem, r.Elem, v.Items, false, elemLoc, depth+1, cv)
	if len(inner) > 0 {
		out = append(out, jen.For(i.Clone().Op(":=").Range().Add(x.Clone())).Block(inner...))
	}
	if len(out) == 0 {
		return nil
	}
	// Always inside the if that found the slice set, so at is scoped.
	return append([]jen.Code{at.Clone().Op(":=").Add(loc())}, out...)
}

func checkMap(x *jen.Statement, r *schema.TypeRef, v *schema.JSONValueCheck, loc func() jen.Code, depth int, cv *checkVars) []jen.Code {
	at := jen.Id(fmt.Sprintf("at%d", depth))
	k := jen.Id(fmt.Sprintf("k%d", depth))
	e := jen.Id(fmt.Sprintf("e%d", depth))
	elemLoc := func() jen.Code {
		return jen.Op("&").Add(impl("JSONAt")).Values(jen.Id("Up").Op(":").Add(at.Clone()), jen.Id("Key").Op(":").Add(k.Clone()))
	}
	inner := checkValue(e.Clone(), r.Elem, v.Values, false, elemLoc, depth+1, cv)
	if len(inner) == 0 {
		return nil
	}
	return []jen.Code{
		at.Clone().Op(":=").Add(loc()),
		jen.For(jen.List(k.Clone(), e.Clone()).Op(":=").Range().Add(x.Clone())).Block(inner...),
	}
}

// jsonWant names the JSON type a Go type holds, for a message.
func jsonWant(r *schema.TypeRef, v *schema.JSONValueCheck) string {
	for r.Kind == schema.Pointer {
		r = r.Elem
	}
	switch {
	case r.Kind == schema.Slice:
		return "array"
	case r.Kind == schema.Map, v.Struct != nil:
		return "object"
	case r.Kind == schema.Builtin && r.Name == "int64":
		return "integer"
	case r.Kind == schema.Builtin && r.Name == "float64":
		return "number"
	case r.Kind == schema.Builtin && r.Name == "bool":
		return "boolean"
	}
	return "string"
}

// checkRoot emits, for a message's payload struct, the func the message
// type calls and the payload's Validate method:
//
//	func acemqCheckOrder(v any, c *acemqimpl.JSONCheck) bool
//	func (v Order) Validate() error
func checkRoot(f *jen.File, t *schema.Type, fn, typeVar, message string) {
	doc(f.Comment, "%s is the generated check of %s's JSON Schema (acemqimpl.JSONChecker).", fn, t.Name)
	f.Func().Id(fn).Params(jen.Id("v").Any(), jen.Id("c").Op("*").Add(impl("JSONCheck"))).Bool().Block(
		jen.Switch(jen.Id("x").Op(":=").Id("v").Assert(jen.Type())).Block(
			jen.Case(jen.Id(t.Name)).Block(jen.Id("x").Dot(checkName).Call(jen.Id("c"), jen.Nil())),
			jen.Case(jen.Op("*").Id(t.Name)).Block(
				jen.If(jen.Id("x").Op("==").Nil()).Block(jen.Return(jen.False())),
				jen.Id("x").Dot(checkName).Call(jen.Id("c"), jen.Nil()),
			),
			jen.Default().Block(jen.Return(jen.False())),
		),
		jen.Return(jen.True()),
	)
	for _, fd := range t.Fields {
		if fd.GoName == "Validate" {
			return // the field takes the name
		}
	}
	f.Line()
	doc(f.Comment, "Validate reports whether v may be published as the message %q: nil, or the error Publish would return (one matching runtime.ErrInvalidMessage, with a *runtime.SchemaError, for a value that breaks the schema). It checks v in plain Go and asks the reference validator only about a value the check does not pass.", message)
	f.Func().Params(jen.Id("v").Id(t.Name)).Id("Validate").Params().Error().Block(
		jen.Return(jen.Id(typeVar).Dot("Validate").Call(jen.Id("v"))),
	)
}

// checkShape emits the decode shape of a message's payload struct:
//
//	func acemqShapeOrder() *acemqimpl.JSONShape
//
// one variable per struct it reaches (and per struct reached as nullable),
// so that a recursive one refers to itself, each then given its members.
func checkShape(f *jen.File, root *schema.Type, fn string, cv *checkVars) {
	var order []shapeKey
	vars := map[shapeKey]string{}
	var visit func(k shapeKey)
	var visitField func(r *schema.TypeRef, v *schema.JSONValueCheck)
	visitField = func(r *schema.TypeRef, v *schema.JSONValueCheck) {
		if v.Struct != nil {
			visit(structKey(r, v))
		}
		if v.Items != nil {
			visitField(r.Elem, v.Items)
		}
		if v.Values != nil {
			visitField(r.Elem, v.Values)
		}
	}
	visit = func(k shapeKey) {
		if _, ok := vars[k]; ok {
			return
		}
		vars[k] = fmt.Sprintf("s%d", len(order))
		order = append(order, k)
		for _, fc := range k.t.JSONCheck.Fields {
			visitField(fc.Field.Type, fc.Value)
		}
	}
	rootKey := shapeKey{t: root}
	visit(rootKey)
	var body []jen.Code
	for _, k := range order {
		fields := []jen.Code{jen.Id("Kind").Op(":").Add(impl("JSONObject"))}
		if k.null {
			fields = append(fields, jen.Id("Null").Op(":").True())
		}
		if k.undecided {
			fields = append(fields, jen.Id("NullUndecided").Op(":").True())
		}
		if k.branch {
			fields = append(fields, jen.Id("NullBranch").Op(":").True())
		}
		if k.t.JSONCheck.Closed {
			fields = append(fields, jen.Id("Closed").Op(":").True())
		}
		body = append(body, jen.Id(vars[k]).Op(":=").Op("&").Add(impl("JSONShape")).Values(fields...))
	}
	for _, k := range order {
		body = append(body, jen.Id(vars[k]).Dot("Fields").Op("=").Index().Add(impl("JSONMember")).ValuesFunc(func(g *jen.Group) {
			for _, fc := range k.t.JSONCheck.Fields {
				member := []jen.Code{
					jen.Id("Name").Op(":").Lit(fc.Field.WireName),
					jen.Id("Required").Op(":").Lit(!fc.Field.Optional),
					jen.Id("Shape").Op(":").Add(shapeOf(fc.Field.Type, fc.Value, vars, cv)),
				}
				// One line, or a field a line when that is too wide.
				lit := jen.Values(member...)
				if !fits(2, ",", lit) {
					lit = jen.Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, member...)
				}
				g.Line().Add(lit)
			}
			g.Line()
		}))
	}
	body = append(body, jen.Return(jen.Id(vars[rootKey])))
	doc(f.Comment, "%s is the decode shape of %s (its acemqimpl.JSONFuncs.Shape): what the struct cannot show of a body.", fn, root.Name)
	f.Func().Id(fn).Params().Op("*").Add(impl("JSONShape")).Block(body...)
}

// shapeKey is a struct's shape, nullable or not.
type shapeKey struct {
	t         *schema.Type
	null      bool
	undecided bool // null valid, held in a struct value that cannot show it
	branch    bool // anyOf/oneOf [the struct, null]
}

// structKey is the shape of a struct value of Go type r (a pointer or
// not) checked by v.
func structKey(r *schema.TypeRef, v *schema.JSONValueCheck) shapeKey {
	ptr := r.Kind == schema.Pointer
	return shapeKey{t: v.Struct, null: v.Null && ptr, undecided: v.Null && !ptr, branch: v.NullBranch}
}

// shapeOf is the shape of a value of Go type r checked by v.
func shapeOf(r *schema.TypeRef, v *schema.JSONValueCheck, vars map[shapeKey]string, cv *checkVars) jen.Code {
	if v.Struct != nil {
		return jen.Id(vars[structKey(r, v)])
	}
	for r.Kind == schema.Pointer {
		r = r.Elem
	}
	var fields []jen.Code
	if v.Null {
		fields = append(fields, jen.Id("Null").Op(":").True())
	}
	if v.NullBranch {
		fields = append(fields, jen.Id("NullBranch").Op(":").True())
	}
	switch {
	case r.Kind == schema.Slice:
		fields = append(fields, jen.Id("Kind").Op(":").Add(impl("JSONArray")), jen.Id("Elem").Op(":").Add(shapeOf(r.Elem, v.Items, vars, cv)))
	case r.Kind == schema.Map:
		fields = append(fields, jen.Id("Kind").Op(":").Add(impl("JSONMap")), jen.Id("Elem").Op(":").Add(shapeOf(r.Elem, v.Values, vars, cv)))
	case r.Kind == schema.Qual && r.Pkg == "time" && r.Name == "Time":
		// encoding/json keeps no text of a time.Time: the scan checks it.
		fields = append(fields, jen.Id("Kind").Op(":").Add(impl("JSONString")), jen.Id("Format").Op(":").Id(cv.format("date-time")))
	case r.Kind == schema.Builtin && r.Name == "float64" && v.Minimum+v.Maximum+v.ExclusiveMinimum+v.ExclusiveMaximum != "":
		// A float64 cannot tell a number rounded onto a bound from the
		// bound: the scan checks the bounds on the text (checkNumber).
		fields = append(fields, jen.Id("Kind").Op(":").Add(impl("JSONNumber")))
		for _, b := range []struct{ name, lit string }{
			{"Minimum", v.Minimum}, {"Maximum", v.Maximum}, {"ExclusiveMinimum", v.ExclusiveMinimum}, {"ExclusiveMaximum", v.ExclusiveMaximum},
		} {
			if b.lit != "" {
				fields = append(fields, jen.Id(b.name).Op(":").Lit(b.lit))
			}
		}
	}
	return jen.Op("&").Add(impl("JSONShape")).Values(fields...)
}
