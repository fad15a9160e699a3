package emit

import (
	"time"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// policiesFile emits, per retry policy, an unexported variable that the
// consumers use and a func that returns a copy, so that no code outside
// the package can change the policy of every consumer:
//
//	var standardPolicy = runtime.Exponential(5, time.Second, time.Minute).WithGiveUpAfter(10 * time.Minute)
//
//	func StandardPolicy() runtime.RetryPolicy { return standardPolicy }
func policiesFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	for _, p := range m.Policies {
		doc(f.Comment, "%s is the retry policy %q: %s.", p.VarName, p.Name, p.Value.String())
		decl := jen.Var().Id(p.VarName).Op("=").Add(policyExpr(p, false))
		if !fits(0, "", decl) {
			decl = jen.Var().Id(p.VarName).Op("=").Add(policyExpr(p, true))
		}
		f.Add(decl)
		f.Line()
		doc(f.Comment, "%s returns the retry policy %q (a copy): %s. The consumers of its queues use it unless their opts carry runtime.WithRetry.", p.GoName, p.Name, p.Value.String())
		f.Func().Id(p.GoName).Params().Add(rt("RetryPolicy")).Block(jen.Return(jen.Id(p.VarName)))
		f.Line()
	}
	return f
}

// policyExpr is the policy's constructor and its With methods, chained on
// one line or, when lines, each method on a line of its own:
//
//	var r1Policy = runtime.Exponential(3, 500*time.Millisecond, time.Second).
//		WithJitter(0.0).
//		WithWaitInBrokerFrom(time.Second)
func policyExpr(p *model.Policy, lines bool) *jen.Statement {
	var s *jen.Statement
	if p.Kind == model.Exponential {
		s = rt("Exponential").Call(jen.Lit(p.Attempts), duration(p.Initial), duration(p.Max))
	} else {
		s = rt("Fixed").Call(jen.Lit(p.Attempts), duration(p.Initial))
	}
	if p.Multiplier != nil {
		s = dot(s, "WithMultiplier", lines).Call(jen.Lit(*p.Multiplier))
	}
	if p.Jitter != nil {
		s = dot(s, "WithJitter", lines).Call(jen.Lit(*p.Jitter))
	}
	if p.WaitInBrokerFrom != nil {
		s = dot(s, "WithWaitInBrokerFrom", lines).Call(duration(*p.WaitInBrokerFrom))
	}
	if p.GiveUpAfter > 0 {
		s = dot(s, "WithGiveUpAfter", lines).Call(duration(p.GiveUpAfter))
	}
	return s
}

var durationUnits = []struct {
	d    time.Duration
	name string
}{
	{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"},
	{time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"},
}

// duration writes d in the largest whole unit: time.Second, 90 * time.Second,
// 10 * time.Minute; 0 for zero.
func duration(d time.Duration) *jen.Statement {
	if d == 0 {
		return jen.Lit(0)
	}
	for _, u := range durationUnits {
		if d%u.d != 0 {
			continue
		}
		if n := int64(d / u.d); n != 1 {
			return jen.Lit(int(n)).Op("*").Qual(timePkg, u.name)
		}
		return jen.Qual(timePkg, u.name)
	}
	return jen.Qual(timePkg, "Duration").Call(jen.Lit(int64(d)))
}

// dot is s.name, after a line break when lines.
func dot(s *jen.Statement, name string, lines bool) *jen.Statement {
	if lines {
		return s.Op(".").Line().Id(name)
	}
	return s.Dot(name)
}
