package amqpx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestClassifyDial(t *testing.T) {
	cases := []struct {
		err   error
		kind  error
		again bool
	}{
		{amqp.ErrCredentials, core.ErrAuth, false},
		{&amqp.Error{Code: amqp.NotAllowed, Reason: "vhost x not found", Server: true}, core.ErrAuth, false},
		{&amqp.Error{Code: amqp.ConnectionForced, Reason: "shutdown", Server: true}, core.ErrUnreachable, true},
		{&amqp.Error{Code: amqp.FrameError}, nil, false},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, core.ErrUnreachable, true},
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, core.ErrUnreachable, true},
		{io.EOF, core.ErrUnreachable, true},
		{&errHandshakeCut{err: syscall.ECONNRESET}, core.ErrUnreachable, true},
		{errors.New("something else"), nil, false},
	}
	for _, tc := range cases {
		kind, again := ClassifyDial(fmt.Errorf("wrapped: %w", tc.err))
		if kind != tc.kind || again != tc.again {
			t.Errorf("ClassifyDial(%v) = %v, %v; want %v, %v", tc.err, kind, again, tc.kind, tc.again)
		}
	}
}

// What amqp091-go makes of a socket closed under the handshake is a cut
// when the socket says so; the broker's own word, and a 403 under TLS
// (where RabbitMQ refuses a login by closing the socket), are kept.
func TestHandshakeCutIn(t *testing.T) {
	eof := io.EOF
	reset := &net.OpError{Op: "read", Err: syscall.ECONNRESET}
	cases := []struct {
		name  string
		err   error
		cut   error
		plain bool
		want  bool // an errHandshakeCut
	}{
		{"frame error, reset", &amqp.Error{Code: amqp.FrameError, Reason: reset.Error()}, reset, true, true},
		{"frame error, EOF, TLS", &amqp.Error{Code: amqp.FrameError, Reason: "EOF"}, eof, false, true},
		{"closed, EOF", amqp.ErrClosed, eof, true, true},
		{"made-up 403, plain", amqp.ErrCredentials, eof, true, true},
		{"made-up 403, TLS", amqp.ErrCredentials, eof, false, false},
		{"the broker's 403", &amqp.Error{Code: amqp.AccessRefused, Reason: "ACCESS_REFUSED", Server: true}, eof, true, false},
		{"the broker's 530", &amqp.Error{Code: amqp.NotAllowed, Reason: "vhost", Server: true}, eof, true, false},
		{"frame error, socket fine", &amqp.Error{Code: amqp.FrameError, Reason: "frame could not be parsed"}, nil, true, false},
		{"no certificate", &errNoClientCertificate{err: amqp.ErrClosed}, eof, false, false},
	}
	for _, tc := range cases {
		got := HandshakeCutIn(tc.err, tc.cut, tc.plain)
		var cut *errHandshakeCut
		if errors.As(got, &cut) != tc.want {
			t.Errorf("%s: handshakeCutIn = %v, want a cut: %v", tc.name, got, tc.want)
		}
		if tc.want && !errors.Is(got, tc.cut) {
			t.Errorf("%s: %v does not keep its cause %v", tc.name, got, tc.cut)
		}
		if kind, again := ClassifyDial(got); tc.want && (kind != core.ErrUnreachable || !again) {
			t.Errorf("%s: classifyDial = %v, %v; want core.ErrUnreachable, again", tc.name, kind, again)
		}
	}
}

// startOk builds a connection.start-ok frame whose client-properties hold
// a capabilities table, as amqp091-go writes it.
func startOk(caps []byte) []byte {
	table := func(entries ...[]byte) []byte {
		body := bytes.Join(entries, nil)
		return binary.BigEndian.AppendUint32(nil, uint32(len(body))) // then body
	}
	shortstr := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	longstr := func(s string) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...) }
	product := append(shortstr("product"), append([]byte{'S'}, longstr("acemq")...)...)
	capsEntry := append(shortstr("capabilities"), 'F')
	capsEntry = append(capsEntry, table(caps)...)
	capsEntry = append(capsEntry, caps...)
	props := append(product, capsEntry...)
	payload := []byte{0, 10, 0, 11}
	payload = append(payload, table(props)...)
	payload = append(payload, props...)
	payload = append(payload, shortstr("PLAIN")...)
	payload = append(payload, longstr("\x00guest\x00guest")...)
	payload = append(payload, shortstr("en_US")...)
	frame := []byte{1, 0, 0}
	frame = binary.BigEndian.AppendUint32(frame, uint32(len(payload)))
	frame = append(frame, payload...)
	return append(frame, 0xCE)
}

func TestCapabilityConnRewritesStartOk(t *testing.T) {
	basicNack := append([]byte{byte(len("basic.nack"))}, append([]byte("basic.nack"), 't', 1)...)
	in := startOk(basicNack)
	want := startOk(append(append([]byte{}, authFailureClose...), basicNack...))
	var out bytes.Buffer
	c := &CapabilityConn{Conn: fakeConn{&out}}
	// The protocol header, then start-ok in two writes, then a later frame.
	later := []byte{1, 0, 0, 0, 0, 0, 4, 0, 10, 0, 31, 0xCE}
	for _, w := range [][]byte{[]byte("AMQP\x00\x00\x09\x01"), in[:20], in[20:], later} {
		if n, err := c.Write(w); err != nil || n != len(w) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	wantAll := append(append([]byte("AMQP\x00\x00\x09\x01"), want...), later...)
	if !bytes.Equal(out.Bytes(), wantAll) {
		t.Errorf("written:\n% x\nwant:\n% x", out.Bytes(), wantAll)
	}
	// Not AMQP underneath (TLS): everything passes through untouched.
	out.Reset()
	c = &CapabilityConn{Conn: fakeConn{&out}}
	hello := []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}
	if _, err := c.Write(hello); err != nil || !bytes.Equal(out.Bytes(), hello) {
		t.Errorf("TLS bytes: wrote % x, %v", out.Bytes(), err)
	}
}

type fakeConn struct{ w *bytes.Buffer }

func (f fakeConn) Write(p []byte) (int, error) { return f.w.Write(p) }

func (fakeConn) Read([]byte) (int, error) { return 0, io.EOF }

func (fakeConn) Close() error { return nil }

func (fakeConn) LocalAddr() net.Addr { return nil }

func (fakeConn) RemoteAddr() net.Addr { return nil }

func (fakeConn) SetDeadline(time.Time) error { return nil }

func (fakeConn) SetReadDeadline(time.Time) error { return nil }

func (fakeConn) SetWriteDeadline(time.Time) error { return nil }
