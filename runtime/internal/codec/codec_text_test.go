package codec

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

type codecStringer struct{ s string }

func (c *codecStringer) String() string { return c.s }

func TestTextCodecEncode(t *testing.T) {
	ctx := context.Background()
	c := NewTextCodec()
	if c.ContentType() != "text/plain" {
		t.Fatalf("content type %q", c.ContentType())
	}
	s := "pointer"
	tests := []struct {
		in   any
		want string
	}{
		{"this is not JSON", "this is not JSON"},
		{"", ""},
		{[]byte{0xff, 0x00, 'x'}, "\xff\x00x"},
		{&s, "pointer"},
		{&codecStringer{"stringer"}, "stringer"},
		{time.Duration(1500) * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		got, err := c.Encode(ctx, tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("Encode(%#v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	// The body does not alias the caller's slice.
	in := []byte("abc")
	got, _ := c.Encode(ctx, in)
	in[0] = 'X'
	if string(got) != "abc" {
		t.Errorf("Encode aliases its input: %q", got)
	}
}

func TestTextCodecEncodeRefuses(t *testing.T) {
	c := NewTextCodec()
	var nilStringer *codecStringer
	var nilString *string
	for _, in := range []any{42, nil, struct{}{}, nilStringer, nilString, []string{"a"}} {
		got, err := c.Encode(context.Background(), in)
		if err == nil {
			t.Errorf("Encode(%#v) = %q, want an error", in, got)
			continue
		}
		if !strings.HasPrefix(err.Error(), "text codec") {
			t.Errorf("Encode(%#v): %v", in, err)
		}
		if errors.Is(err, core.ErrInvalidMessage) {
			t.Errorf("a wrong Go type is not a schema violation: %v", err)
		}
	}
}

func TestTextCodecDecode(t *testing.T) {
	ctx := context.Background()
	c := NewTextCodec()
	body := []byte("héllo\x00\xff")
	var s string
	if err := c.Decode(ctx, body, &s); err != nil || s != string(body) {
		t.Fatalf("into *string: %q, %v", s, err)
	}
	var b []byte
	if err := c.Decode(ctx, body, &b); err != nil || string(b) != string(body) {
		t.Fatalf("into *[]byte: %q, %v", b, err)
	}
	body[0] = 'X'
	if b[0] == 'X' {
		t.Fatal("Decode aliases the body")
	}
	var n int
	var nilS *string
	for _, target := range []any{&n, s, nil, nilS, new(any)} {
		err := c.Decode(ctx, body, target)
		if err == nil || !strings.Contains(err.Error(), "text codec cannot decode into a") {
			t.Errorf("Decode into %T: %v", target, err)
		}
	}
}
