package jsoncheck

import "strings"

// emailFast is santhosh-tekuri/jsonschema's email format (validateEmail:
// at most 254 bytes, a local part of at most 64 before the last @, of
// letters, digits and .!#$%&'*+-/=?^_`{|}~ without a dot at either end or
// two in a row, and a domain that is a hostname: labels of 1 to 63
// letters, digits and hyphens, no hyphen at either end, at most 253 bytes
// without a trailing dot). sure is false for a quoted local part and a
// domain in brackets (an IP address), which the library's function
// decides. It does what the library does without boxing the string and
// without strings.Split's allocation (TestEmailFastIsTheReferences,
// FuzzEmailFast). The library ranges over runes where this reads bytes:
// a byte that is not ASCII is not one of the characters either takes.
func emailFast(s string) (ok, sure bool) {
	if len(s) > 254 {
		return false, true
	}
	at := strings.LastIndexByte(s, '@')
	if at == -1 {
		return false, true
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return false, true
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		return false, false
	}
	if strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
		return false, true
	}
	for i := 0; i < len(local); i++ {
		if c := local[i]; !alnum(c) && !strings.ContainsRune(".!#$%&'*+-/=?^_`{|}~", rune(c)) {
			return false, true
		}
	}
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		return false, false
	}
	return hostnameFast(domain), true
}

// hostnameFast is the library's validateHostname.
func hostnameFast(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return false
	}
	for {
		label, rest, more := strings.Cut(s, ".")
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !alnum(c) && c != '-' {
				return false
			}
		}
		if !more {
			return true
		}
		s = rest
	}
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
