package main

import "testing"

// The raw relay reads the string headers out of a row's header_table and
// skips the others.
func TestStringHeaders(t *testing.T) {
	b := []byte{1, 'a', 'S', 0, 0, 0, 2, 'h', 'i'}
	b = append(b, 1, 'n', 'l', 0, 0, 0, 0, 0, 0, 0, 7)
	b = append(b, 1, 't', 'F', 0, 0, 0, 3, 1, 'x', 'V')
	b = append(b, 1, 'z', 'V')
	h, err := stringHeaders(b)
	if err != nil || len(h) != 1 || h["a"] != "hi" {
		t.Fatalf("stringHeaders = %v, %v; want a: hi", h, err)
	}
	if _, err := stringHeaders(b[:len(b)-4]); err == nil {
		t.Errorf("a cut table read without an error")
	}
}
