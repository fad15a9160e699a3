// Package where parses the --where expressions of `acemq replay` and
// `acemq dlq peek`: a field, an operator and a value, such as
// error~warehouse, type=order.placed.v2, attempt>=3, age<1h,
// first-seen<2026-11-30T10:00:00Z or header.tenant=acme. Several
// expressions are ANDed.
package where

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// Fields lists the fields an expression may name, for error messages and
// help.
var Fields = []string{"error", "type", "id", "queue", "origin", "correlation-id", "content-type",
	"attempt", "replay-count", "age", "first-seen", "header.<name>"}

// Message is what an expression is evaluated on.
type Message struct {
	Envelope runtime.Envelope
	Headers  map[string]any
	Body     []byte
}

// Expr is one parsed expression.
type Expr struct {
	Text  string // as written
	field string
	op    string
	str   string
	num   int64
	dur   time.Duration
	when  time.Time
}

// Filter is several expressions ANDed; the empty filter accepts all.
type Filter []Expr

// Match reports whether every expression accepts m. now is the time ages
// are measured from.
func (f Filter) Match(m Message, now time.Time) bool {
	for _, e := range f {
		if !e.Match(m, now) {
			return false
		}
	}
	return true
}

// ops in the order they are tried: two-character ones first.
var ops = []string{"<=", ">=", "!=", "!~", "=", "~", "<", ">"}

// kind of a field's value.
type kind int

const (
	text kind = iota
	number
	duration
	instant
)

func kindOf(field string) (kind, bool) {
	switch field {
	case "error", "type", "id", "queue", "origin", "correlation-id", "content-type":
		return text, true
	case "attempt", "replay-count":
		return number, true
	case "age":
		return duration, true
	case "first-seen":
		return instant, true
	}
	if strings.HasPrefix(field, "header.") && len(field) > len("header.") {
		return text, true
	}
	return 0, false
}

// Parse reads every expression; the first bad one is the error.
func Parse(exprs []string) (Filter, error) {
	var f Filter
	for _, s := range exprs {
		e, err := ParseOne(s)
		if err != nil {
			return nil, err
		}
		f = append(f, e)
	}
	return f, nil
}

// ParseOne reads one expression.
func ParseOne(s string) (Expr, error) {
	at, op := -1, ""
	for i := 0; i < len(s) && at < 0; i++ {
		for _, o := range ops {
			if strings.HasPrefix(s[i:], o) {
				at, op = i, o
				break
			}
		}
	}
	if at <= 0 {
		return Expr{}, fmt.Errorf("--where %q: want FIELD OP VALUE, with OP one of = != ~ !~ < <= > >= (for example error~warehouse or attempt>=3)", s)
	}
	e := Expr{Text: s, field: strings.TrimSpace(s[:at]), op: op, str: strings.TrimSpace(s[at+len(op):])}
	k, ok := kindOf(e.field)
	if !ok {
		return Expr{}, fmt.Errorf("--where %q: unknown field %q; the fields are %s", s, e.field, strings.Join(Fields, ", "))
	}
	ordered := op == "<" || op == "<=" || op == ">" || op == ">="
	switch k {
	case text:
		if ordered {
			return Expr{}, fmt.Errorf("--where %q: %s is text: use = != ~ (contains) or !~", s, e.field)
		}
	case number:
		if op == "~" || op == "!~" {
			return Expr{}, fmt.Errorf("--where %q: %s is a number: use = != < <= > >=", s, e.field)
		}
		n, err := strconv.ParseInt(e.str, 10, 64)
		if err != nil {
			return Expr{}, fmt.Errorf("--where %q: %s wants a whole number, not %q", s, e.field, e.str)
		}
		e.num = n
	case duration:
		if !ordered {
			return Expr{}, fmt.Errorf("--where %q: age is compared with < <= > >= (for example age<1h)", s)
		}
		d, err := time.ParseDuration(e.str)
		if err != nil {
			return Expr{}, fmt.Errorf("--where %q: age wants a duration such as 90s, 30m or 1h, not %q", s, e.str)
		}
		e.dur = d
	case instant:
		if !ordered {
			return Expr{}, fmt.Errorf("--where %q: first-seen is compared with < <= > >= (for example first-seen<2026-11-30T10:00:00Z)", s)
		}
		t, err := time.Parse(time.RFC3339, e.str)
		if err != nil {
			return Expr{}, fmt.Errorf("--where %q: first-seen wants an RFC 3339 time such as 2026-11-30T10:00:00Z, not %q", s, e.str)
		}
		e.when = t
	}
	return e, nil
}

// Match reports whether e accepts m.
func (e Expr) Match(m Message, now time.Time) bool {
	env := m.Envelope
	k, _ := kindOf(e.field)
	switch k {
	case number:
		n := int64(env.Attempt)
		if e.field == "replay-count" {
			n = int64(env.ReplayCount)
		}
		return compare(cmpInt(n, e.num), e.op)
	case duration:
		if env.FirstSeen.IsZero() {
			return false // no age: never matches a bound on it
		}
		return compare(cmpInt(int64(now.Sub(env.FirstSeen)), int64(e.dur)), e.op)
	case instant:
		if env.FirstSeen.IsZero() {
			return false
		}
		return compare(env.FirstSeen.Compare(e.when), e.op)
	}
	var v string
	switch e.field {
	case "error":
		v = env.Error
	case "type":
		v = env.Type
	case "id":
		v = env.ID
	case "queue":
		v = runtime.OwnQueue(m.Headers)
	case "origin":
		v = env.Origin
	case "correlation-id":
		v = env.CorrelationID
	case "content-type":
		v = env.ContentType
	default:
		h, ok := m.Headers[strings.TrimPrefix(e.field, "header.")]
		if !ok {
			return e.op == "!=" || e.op == "!~"
		}
		if b, isBytes := h.([]byte); isBytes {
			h = string(b)
		}
		v = fmt.Sprint(h)
	}
	switch e.op {
	case "=":
		return v == e.str
	case "!=":
		return v != e.str
	case "~":
		return strings.Contains(v, e.str)
	case "!~":
		return !strings.Contains(v, e.str)
	}
	return false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compare(c int, op string) bool {
	switch op {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}
