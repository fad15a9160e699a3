package jsoncheck

// decimal is a JSON number's exact value: 0.d1d2d3… × 10^exp, negative
// when neg, its significant digits without leading or trailing zeros (zero
// has none). It is what the reference validator compares (a big.Rat of
// the number's text), read without allocating.
type decimal struct {
	neg    bool
	n      int // digits used
	exp    int
	digits [maxDecimalDigits]byte
}

// maxDecimalDigits is the most significant digits a number is read with;
// a longer one is left to the reference validator.
const maxDecimalDigits = 48

// maxDecimalExp bounds the exponent a number is read with; a number
// written with a larger one is left to the reference validator.
const maxDecimalExp = 100000

// parseDecimal reads text, a JSON number (an exponent may carry "+"), as
// a decimal; ok is false for anything else, or one longer than the limits
// above.
func parseDecimal[T string | []byte](text T) (d decimal, ok bool) {
	i := 0
	if i < len(text) && text[i] == '-' {
		d.neg = true
		i++
	}
	point := 0      // digits before the point, leading zeros not counted
	seen := false   // a digit was read
	leading := true // every digit so far was 0
	zeros := 0      // trailing zeros not yet stored
	digit := func(c byte, beforePoint bool) bool {
		seen = true
		if c == '0' && leading {
			if !beforePoint {
				point--
			}
			return true
		}
		if leading {
			leading = false
		}
		if beforePoint {
			point++
		}
		if c == '0' {
			zeros++
			return true
		}
		if d.n+zeros+1 > maxDecimalDigits {
			return false
		}
		for ; zeros > 0; zeros-- {
			d.digits[d.n] = '0'
			d.n++
		}
		d.digits[d.n] = c
		d.n++
		return true
	}
	for i < len(text) && '0' <= text[i] && text[i] <= '9' {
		if !digit(text[i], true) {
			return decimal{}, false
		}
		i++
	}
	if !seen {
		return decimal{}, false
	}
	if i < len(text) && text[i] == '.' {
		i++
		start := i
		for i < len(text) && '0' <= text[i] && text[i] <= '9' {
			if !digit(text[i], false) {
				return decimal{}, false
			}
			i++
		}
		if i == start {
			return decimal{}, false
		}
	}
	exp := 0
	if i < len(text) && (text[i] == 'e' || text[i] == 'E') {
		i++
		eneg := false
		if i < len(text) && (text[i] == '+' || text[i] == '-') {
			eneg = text[i] == '-'
			i++
		}
		start := i
		for i < len(text) && '0' <= text[i] && text[i] <= '9' {
			exp = exp*10 + int(text[i]-'0')
			if exp > maxDecimalExp {
				return decimal{}, false
			}
			i++
		}
		if i == start {
			return decimal{}, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(text) {
		return decimal{}, false
	}
	if d.n == 0 {
		return decimal{}, true // zero, -0 included
	}
	d.exp = point + exp
	return d, true
}

// sign is -1, 0 or 1.
func (d *decimal) sign() int {
	switch {
	case d.n == 0:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmp is -1, 0 or 1 as d is below, equal to or above e.
func (d *decimal) cmp(e *decimal) int {
	ds, es := d.sign(), e.sign()
	if ds != es || ds == 0 {
		return compareInts(ds, es)
	}
	// Same sign, neither zero: compare the magnitudes, then flip for
	// negatives.
	m := 0
	switch {
	case d.exp != e.exp:
		m = compareInts(d.exp, e.exp)
	default:
		for i := 0; i < d.n && i < e.n && m == 0; i++ {
			m = compareInts(int(d.digits[i]), int(e.digits[i]))
		}
		if m == 0 {
			m = compareInts(d.n, e.n)
		}
	}
	return m * ds
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// number checks a number's text against the bounds of sh: a number
// outside them is a violation, one that cannot be read exactly leaves the
// check undecided. This is the comparison the reference makes, on the
// text, so a number that a float64 rounds onto a bound (-1e-400 against
// minimum 0) is decided as the reference decides it.
func (s *scan) number(sh *Shape, text []byte) {
	if sh.Minimum == "" && sh.Maximum == "" && sh.ExclusiveMinimum == "" && sh.ExclusiveMaximum == "" {
		return
	}
	d, ok := parseDecimal(text)
	if !ok {
		s.c.Undecided()
		return
	}
	if sh.Minimum != "" && s.bound(&d, sh.Minimum) < 0 {
		s.fail(nil, "minimum: must not be < "+sh.Minimum)
	}
	if sh.Maximum != "" && s.bound(&d, sh.Maximum) > 0 {
		s.fail(nil, "maximum: must not be > "+sh.Maximum)
	}
	if sh.ExclusiveMinimum != "" && s.bound(&d, sh.ExclusiveMinimum) <= 0 {
		s.fail(nil, "exclusiveMinimum: must not be <= "+sh.ExclusiveMinimum)
	}
	if sh.ExclusiveMaximum != "" && s.bound(&d, sh.ExclusiveMaximum) >= 0 {
		s.fail(nil, "exclusiveMaximum: must not be >= "+sh.ExclusiveMaximum)
	}
}

// bound compares d with the bound written as text; a bound it cannot
// read (acemq-gen writes none) leaves the check undecided and compares
// as equal.
func (s *scan) bound(d *decimal, text string) int {
	b, ok := parseDecimal(text)
	if !ok {
		s.c.Undecided()
		return 0
	}
	return d.cmp(&b)
}
