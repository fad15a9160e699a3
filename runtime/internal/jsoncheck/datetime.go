package jsoncheck

// dateTimeFast is santhosh-tekuri/jsonschema's date-time format
// (validateDateTime: a date time.Parse reads as "2006-01-02", a t or T, a
// time of hh:mm:ss, an optional fraction, z, Z or a ±hh:mm offset, a leap
// second only at 23:59 UTC) on the text a producer writes: every date and
// time field of ASCII digits. sure is false for any other text (a sign,
// a space, a colon out of place inside a field, which the library's
// strconv.Atoi and strings.SplitN read in their own ways): the library's
// function decides those. It does what the library does without boxing
// the string and without strings.SplitN's allocation
// (TestDateTimeFastIsTheReferences, FuzzDateTimeFast).
func dateTimeFast(s string) (ok, sure bool) {
	if len(s) < 20 {
		return false, true
	}
	if s[10] != 't' && s[10] != 'T' {
		return false, true
	}
	if s[4] != '-' || s[7] != '-' || !digits(s[:4]) || !digits(s[5:7]) || !digits(s[8:10]) {
		return false, false
	}
	year, month, day := num(s[:4]), num(s[5:7]), num(s[8:10])
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return false, true
	}
	return timeFast(s[11:])
}

// timeFast is the library's validateTime on the text of dateTimeFast.
func timeFast(str string) (ok, sure bool) {
	if len(str) < 9 || str[2] != ':' || str[5] != ':' {
		return false, true
	}
	if !digits(str[:2]) || !digits(str[3:5]) || !digits(str[6:8]) {
		return false, false
	}
	h, m, s := num(str[:2]), num(str[3:5]), num(str[6:8])
	if h > 23 || m > 59 || s > 60 {
		return false, true
	}
	str = str[8:]
	if len(str) > 0 && str[0] == '.' {
		n := 1
		for n < len(str) && '0' <= str[n] && str[n] <= '9' {
			n++
		}
		if n == 1 {
			return false, true
		}
		str = str[n:]
	}
	if str != "z" && str != "Z" {
		if len(str) != 6 {
			return false, true
		}
		var sign int
		switch str[0] {
		case '+':
			sign = -1
		case '-':
			sign = +1
		default:
			return false, true
		}
		if str[3] != ':' {
			return false, true
		}
		if !digits(str[1:3]) || !digits(str[4:6]) {
			return false, false
		}
		zh, zm := num(str[1:3]), num(str[4:6])
		if zh > 23 || zm > 59 {
			return false, true
		}
		hm := (h*60 + m) + sign*(zh*60+zm)
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	if s >= 60 && (h != 23 || m != 59) {
		return false, true
	}
	return true, true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// num is the value of s, ASCII digits.
func num(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// daysIn is the length of month in year, as package time counts it
// (the proleptic Gregorian calendar).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
