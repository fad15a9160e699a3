package acemqimpl_test

import (
	"context"
	"fmt"

	"github.com/acemq/acemq-go/runtime/acemqimpl"
	"github.com/acemq/acemq-go/runtime/acemqimpl/impltest"
	"github.com/hamba/avro/v2"
)

type pingMessage struct {
	Seq int64 `json:"seq"`
}

// checkPing is what acemq-gen writes for {"required": ["seq"],
// "properties": {"seq": {"type": "integer", "minimum": 1}}}: a check of
// the typed value, in plain Go.
func checkPing(v any, c *acemqimpl.JSONCheck) bool {
	var p pingMessage
	switch x := v.(type) {
	case pingMessage:
		p = x
	case *pingMessage:
		p = *x
	default:
		return false // not ours: the reference validator decides
	}
	if p.Seq < 1 {
		c.Fail(&acemqimpl.JSONAt{Key: "seq"}, "minimum: must not be < 1")
	}
	return true
}

// A checked JSON type validates with its generated check and asks the
// reference validator only about a value the check does not pass: the
// error is the reference's. Generated code declares its types this way
// (with a decode shape for Decode); runtime.WithReferenceValidation on Dial
// turns the checks off.
func ExampleNewJSONType() {
	ping := acemqimpl.NewJSONType[pingMessage]("example.ping.v1",
		`{"required": ["seq"], "properties": {"seq": {"type": "integer", "minimum": 1}}}`, acemqimpl.JSONFuncs{Check: checkPing})
	fmt.Println(ping.Validate(pingMessage{Seq: 1}))
	fmt.Println(ping.Validate(pingMessage{Seq: 0}))
	c, _ := impltest.GeneratedCheck(ping, pingMessage{Seq: 0})
	fmt.Println(c.Err())
	codec, _ := ping.Codec(nil)
	body, err := codec.Encode(context.Background(), pingMessage{Seq: 7})
	fmt.Println(string(body), err)
	// Output:
	// <nil>
	// acemq: invalid message: /seq: minimum: got 0, want 1
	// /seq: minimum: must not be < 1
	// {"seq":7} <nil>
}

// ConvertAvroBranch turns the generic value hamba/avro decodes for a union
// branch into the branch's Go type, found at a path in the schema: here
// field 0's union, branch 1.
func ExampleConvertAvroBranch() {
	type Point struct {
		X int32 `avro:"x"`
	}
	root := func() (avro.Schema, error) {
		return avro.Parse(`{"type": "record", "name": "R", "fields": [{"name": "v", "type": ["null",
			{"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}]}]}`)
	}
	var p Point
	err := acemqimpl.ConvertAvroBranch(root, []int{0, 1}, map[string]any{"x": int32(7)}, &p)
	fmt.Println(p.X, err)
	// Output:
	// 7 <nil>
}
