package model

import (
	"fmt"
	"time"

	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

func (b *builder) policies() {
	b.policyByName = map[string]*Policy{}
	for _, mp := range b.file.Policies {
		who := fmt.Sprintf("policy %q", mp.Name.Value)
		p := &Policy{Name: mp.Name.Value}
		if mp.GoName != nil {
			p.GoName = b.baseName(who, mp.Name, mp.GoName)
		} else if base := b.baseName(who, mp.Name, nil); base != "" {
			p.GoName = base + "Policy"
		}
		if p.GoName != "" {
			p.VarName = names.LowerFirst(p.GoName)
			_ = b.ns.claim(p.GoName, who, mp.Name.Pos) &&
				b.ns.claim(p.VarName, who+" (its variable)", mp.Name.Pos)
		}
		// The runtime's arithmetic runs only on a policy with no error so
		// far: it walks the schedule, which a huge attempts makes endless.
		before := len(b.errs)
		if b.policyShape(who, mp, p) && b.attempts(who, mp) && len(b.errs) == before {
			b.policyValue(who, mp, p)
		}
		b.policyByName[p.Name] = p
		b.m.Policies = append(b.m.Policies, p)
	}
}

// policyShape reads the exponential: or fixed: block; false when the
// policy has neither or both.
func (b *builder) policyShape(who string, mp *manifest.Policy, p *Policy) bool {
	switch {
	case mp.Exponential == nil && mp.Fixed == nil:
		b.errorf(mp.Name.Pos, "%s needs exponential: {attempts, initial, max} or fixed: {attempts, delay}", who)
		return false
	case mp.Exponential != nil && mp.Fixed != nil:
		b.errorf(mp.Fixed.Pos, "%s has both exponential: and fixed:; keep one", who)
		return false
	case mp.Exponential != nil:
		e := mp.Exponential
		p.Kind, p.Attempts = Exponential, e.Attempts.Value
		p.Initial = b.duration(who, "initial", e.Initial)
		p.Max = b.duration(who, "max", e.Max)
		if p.Max < p.Initial {
			b.errorf(e.Max.Pos, "%s: max %s is below initial %s; make max at least initial", who, e.Max.Value, e.Initial.Value)
		}
		p.Multiplier, p.Jitter = floatOf(e.Multiplier), floatOf(e.Jitter)
	default:
		fx := mp.Fixed
		p.Kind, p.Attempts = Fixed, fx.Attempts.Value
		p.Initial = b.duration(who, "delay", fx.Delay)
		p.Max = p.Initial
		p.Jitter = floatOf(fx.Jitter)
	}
	return true
}

// policyValue builds the runtime's value of the policy and checks what the
// runtime would refuse, each at the position of the value to change.
func (b *builder) policyValue(who string, mp *manifest.Policy, p *Policy) {
	var v runtime.RetryPolicy
	if p.Kind == Exponential {
		v = runtime.Exponential(p.Attempts, p.Initial, p.Max)
	} else {
		v = runtime.Fixed(p.Attempts, p.Initial)
	}
	if p.Multiplier != nil {
		v = v.WithMultiplier(*p.Multiplier)
	}
	if p.Jitter != nil {
		v = v.WithJitter(*p.Jitter)
	}
	if w := mp.WaitInBrokerFrom; w != nil {
		d := b.duration(who, "wait_in_broker_from", *w)
		p.WaitInBrokerFrom = &d
		v = v.WithWaitInBrokerFrom(d)
		if d > wire.MaxWaitInBrokerFrom {
			b.errorf(w.Pos, "%s: wait_in_broker_from %s is above %s: a delivery held that long in memory risks the broker's consumer timeout (30m); use %s or less",
				who, w.Value, short(wire.MaxWaitInBrokerFrom), short(wire.MaxWaitInBrokerFrom))
			return
		}
	}
	if g := mp.GiveUpAfter; g != nil {
		p.GiveUpAfter = b.duration(who, "give_up_after", *g)
		if p.GiveUpAfter == 0 {
			b.errorf(g.Pos, "%s: give_up_after %s is no age limit to the runtime (its zero), not \"give up at once\"; "+
				"remove give_up_after for no limit, or write the age after which to give up, like 10m (attempts: 1 gives up at the first failure)", who, g.Value)
			return
		}
		v = v.WithGiveUpAfter(p.GiveUpAfter)
	}
	p.Value = v
	at := policyPos(mp)
	for _, d := range wire.BrokerRungs(wire.Waits(v.Attempts(), v.Delay), v.WaitInBrokerFrom()) {
		if d%time.Second != 0 {
			fix := "use whole-second delays, or a wait_in_broker_from above it"
			if d >= wire.MaxWaitInBrokerFrom {
				// wait_in_broker_from cannot exceed the threshold.
				fix = "use whole-second delays (initial, max and multiplier such that every wait from " + short(wire.MaxWaitInBrokerFrom) + " on is whole seconds)"
			}
			b.errorf(at, "%s: the broker wait %s is not a whole number of seconds (rungs are named <queue>.retry.<N>s); %s", who, d, fix)
			return
		}
	}
	if err := v.Validate(); err != nil {
		b.errorf(at, "%s: %v", who, err)
	}
}

// attempts checks the policy's attempts against the manifest schema's
// bounds (the manifest check reports the same at the same line, so the
// user sees it once).
func (b *builder) attempts(who string, mp *manifest.Policy) bool {
	n, key := manifest.Int{}, "fixed"
	if mp.Exponential != nil {
		n, key = mp.Exponential.Attempts, "exponential"
	} else if mp.Fixed != nil {
		n = mp.Fixed.Attempts
	}
	if n.Value < 1 || n.Value > maxAttempts {
		b.errorf(n.Pos, "%s: %s.attempts %d is out of range; write 1 (no retry) to %d", who, key, n.Value, maxAttempts)
		return false
	}
	return true
}

// maxAttempts is the maximum of attempts in schemas/manifest.schema.json.
const maxAttempts = 1000

func policyPos(mp *manifest.Policy) manifest.Pos {
	if mp.Exponential != nil {
		return mp.Exponential.Pos
	}
	return mp.Fixed.Pos
}

// duration parses a duration the schema has already checked the shape of.
func (b *builder) duration(who, key string, s manifest.Str) time.Duration {
	d, err := time.ParseDuration(s.Value)
	if err != nil {
		b.errorf(s.Pos, "%s: %s %q is not a duration: write a number and a unit, like 500ms, 30s, 10m or 1h", who, key, s.Value)
	}
	return d
}

// short prints a duration without zero units: 15m, not 15m0s.
func short(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"m0s", "h0m"} {
		if len(s) > len(z) && s[len(s)-len(z):] == z {
			s = s[:len(s)-len(z)+1]
		}
	}
	return s
}

func floatOf(f *manifest.Float) *float64 {
	if f == nil {
		return nil
	}
	v := f.Value
	return &v
}
