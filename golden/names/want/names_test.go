package names_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/acemq/acemq-go/golden/names/want"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
)

// selectHandler implements the handler of golden.names.select-1; every
// method hands the message on.
type selectHandler struct{ got chan any }

func (h *selectHandler) HandleType(_ context.Context, m *runtime.Message[names.Type]) runtime.Ack {
	h.got <- m
	return runtime.Accept()
}

func (h *selectHandler) HandleX2faCode(_ context.Context, m *runtime.Message[names.X2faCode]) runtime.Ack {
	h.got <- m
	return runtime.Accept()
}

func (h *selectHandler) HandleCaféCrème(_ context.Context, m *runtime.Message[names.CaféCrème]) runtime.Ack {
	h.got <- m
	return runtime.Accept()
}

func (h *selectHandler) HandleX订单(_ context.Context, m *runtime.Message[names.X订单]) runtime.Ack {
	h.got <- m
	return runtime.Accept()
}

type interfaceHandler struct {
	got chan *runtime.Message[names.RangeEvent]
}

func (h *interfaceHandler) HandleRangeEvent(_ context.Context, m *runtime.Message[names.RangeEvent]) runtime.Ack {
	h.got <- m
	return runtime.Accept()
}

// The awkward names work end to end: keyword, digit and unicode types go
// through the FuncPublisher, with a routing key holding */, a newline and
// //go:generate, to the handler of a queue named with a dash and a digit.
func TestAwkwardNamesEndToEnd(t *testing.T) {
	ctx, conn := goldentest.Connect(t, names.Topology())
	h := &selectHandler{got: make(chan any, 4)}
	c1, err := names.ConsumeGoldenNamesSelect1(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeGoldenNamesSelect1: %v", err)
	}
	defer c1.Close(context.Background())
	ih := &interfaceHandler{got: make(chan *runtime.Message[names.RangeEvent], 1)}
	c2, err := names.ConsumeInterface(ctx, conn, ih)
	if err != nil {
		t.Fatalf("ConsumeInterface: %v", err)
	}
	defer c2.Close(context.Background())

	pub := names.NewFuncPublisher(conn)
	rng := int64(3)
	typ := names.Type{Func: "f", Type: "t", Range: &rng}
	code := names.X2faCode{Type: "totp", Func: 7, Interface: names.X2faCodeChannelSms2}
	cafe := names.CaféCrème{Taille: names.CaféCrèmeTailleTrèsGrand}
	order := names.X订单{X编号: "订-1"}
	for _, publish := range []func() error{
		func() error { return pub.PublishType(ctx, typ) },
		func() error { return pub.PublishX2faCode(ctx, code) },
		func() error { return pub.PublishCaféCrème(ctx, cafe) },
		func() error { return pub.PublishX订单(ctx, order) },
	} {
		if err := publish(); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	for range 4 {
		switch m := goldentest.Receive(t, h.got, "message").(type) {
		case *runtime.Message[names.Type]:
			check(t, m.Payload, typ, m.Envelope, "names.type.v1 */ //go:generate echo pwned")
			if m.RoutingKey != "key */ with\nnewline //go:generate echo pwned" {
				t.Errorf("routing key %q", m.RoutingKey)
			}
		case *runtime.Message[names.X2faCode]:
			check(t, m.Payload, code, m.Envelope, "names.2fa-code.v1")
		case *runtime.Message[names.CaféCrème]:
			check(t, m.Payload, cafe, m.Envelope, "names.café.v1")
		case *runtime.Message[names.X订单]:
			check(t, m.Payload, order, m.Envelope, "names.订单.v1")
		default:
			t.Errorf("unexpected %T", m)
		}
	}

	want := names.RangeEvent{From: 1, To: 9}
	if err := names.NewDirectPublisher(conn).PublishRangeEvent(ctx, want); err != nil {
		t.Fatalf("PublishRangeEvent: %v", err)
	}
	m := goldentest.Receive(t, ih.got, "RangeEvent")
	check(t, m.Payload, want, m.Envelope, "names.range.v1")
}

func check[T any](t *testing.T, got, want T, e runtime.Envelope, typ string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: payload %+v, want %+v", typ, got, want)
	}
	goldentest.CheckEnvelope(t, e, typ)
}

// Without a broker: each message type's codec round-trips a value.
func TestCodecRoundTrip(t *testing.T) {
	rng := int64(3)
	goldentest.RoundTrip(t, names.TypeOfType(), names.Type{Func: "f", Type: "t", Range: &rng})
	goldentest.RoundTrip(t, names.TypeOfX2faCode(), names.X2faCode{Type: "totp", Func: 7, Interface: names.X2faCodeChannelSms2})
	goldentest.RoundTrip(t, names.TypeOfCaféCrème(), names.CaféCrème{Taille: names.CaféCrèmeTailleTrèsGrand})
	goldentest.RoundTrip(t, names.TypeOfX订单(), names.X订单{X编号: "订-1"})
	goldentest.RoundTrip(t, names.TypeOfRangeEvent(), names.RangeEvent{From: 1, To: 9})
}
