package apilist

import (
	"strings"
	"testing"
)

// TestListFollowsInternalAliases lists testdata/alias, whose types are
// aliases of its internal package core's: each alias keeps its line and
// shows core's exported fields, methods and interface methods under its
// own name, core's types in their signatures named by their aliases (or
// core.Name where there is none); an alias of another module's type is
// one line, and nothing unexported or of a type not aliased is listed.
func TestListFollowsInternalAliases(t *testing.T) {
	got, err := List("testdata/alias")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"const Accepts",
		"field Ack embedded core.Meta",
		"field Ack.Delay time.Duration",
		"field Ack.Kind Kind",
		"field Ack.Reason string",
		"field Message.Ack *Ack",
		"field Message.Body T",
		"func Accept() Ack",
		"func NewOwn() *Own",
		"imethod Handler.Handle(m *Message[string]) Ack",
		"imethod Handler.Kind() Kind",
		"method (*Message[T]) Payload() T",
		"method (*Message[T]) Settle(a Ack) (core.Meta, error)",
		"method (*Own) Get() int",
		"method (Kind) String() string",
		"type Ack = core.Ack",
		"type Duration = time.Duration",
		"type Handler = core.Handler",
		"type Kind = core.Kind",
		"type Message[T any] = core.Message[T]",
		"type Own struct",
		"field Own.N int",
	}
	if g, w := strings.Join(got, "\n"), strings.Join(sorted(want), "\n"); g != w {
		t.Errorf("List(testdata/alias):\n%s\nwant:\n%s", g, w)
	}
}

// TestGoDocEntries counts testdata/alias as go doc -all shows it: five
// aliases (one entry each, whatever their target has), Own, its
// constructor NewOwn and its method Get, and Accept (listed under Ack,
// which it returns); the constant is not an entry.
func TestGoDocEntries(t *testing.T) {
	n, err := GoDocEntries("testdata/alias")
	if err != nil {
		t.Fatal(err)
	}
	if n != 9 {
		t.Errorf("GoDocEntries(testdata/alias) = %d, want 9", n)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
