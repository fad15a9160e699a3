package amqpx

import (
	"encoding/base64"
	"encoding/binary"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

// pidAddress is a direct reply-to address made as RabbitMQ makes one, with
// a pid of the given tag (88 NEW_PID_EXT, 103 PID_EXT), atom tag, node and
// ID.
func pidAddress(tag, atom byte, node string, id uint32, key string) string {
	b := []byte{131, tag, atom}
	if atom == 118 || atom == 100 {
		b = binary.BigEndian.AppendUint16(b, uint16(len(node)))
	} else {
		b = append(b, byte(len(node)))
	}
	b = append(b, node...)
	b = binary.BigEndian.AppendUint32(b, id)
	b = binary.BigEndian.AppendUint32(b, 0)
	if tag == 88 {
		b = binary.BigEndian.AppendUint32(b, 0x6b164775)
	} else {
		b = append(b, 1)
	}
	return core.DirectReplyTo + "." + base64.StdEncoding.EncodeToString(b) + "." + key
}

// The shapes RabbitMQ 3.10 was seen to close the publishing connection on
// (541 INTERNAL_ERROR) are refused; the addresses it makes are kept.
func TestDirectAddressWellFormed(t *testing.T) {
	const key = "EDMgIKky/F1ZANQZfZswjw=="
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		// Made by RabbitMQ 3.10 (the fault node) and by the shared node.
		{"amq.rabbitmq.reply-to.g1h2AA9yZXBseUAxMTAzNjEwMTIAACGnAAAAAGsWR3U=.EDMgIKky/F1ZANQZfZswjw==", true},
		{"amq.rabbitmq.reply-to.g1h2AA1yZXBseUA5MjQ4ODg0AAAvHQAAAABrFkLY.5vkwYd6rKaYD/NssFJCkYg==", true},
		{pidAddress(88, 118, "reply@110361012", 9160, key), true},
		{pidAddress(88, 119, "reply@1", 1, key), true},
		{pidAddress(103, 100, "reply@42", 1, key), true},
		{pidAddress(88, 115, "reply@42", 32767, key), true},
		// Made by RabbitMQ 4.3.6 after hours of running: an ID of 36,332.
		{"amq.rabbitmq.reply-to.g1h2AA5yZXBseUA4NTMxODMyNAAAjewAAAAAaxbORA==.3ofY8PZ9vNplk16gyArfLg==", true},
		{pidAddress(88, 118, "reply@1", 99999, key), true},
		// Refused.
		{"amq.rabbitmq.reply-to.g1h2AAAAAAAAAAAA.forged", false},
		{"amq.rabbitmq.reply-to.MDEyMzQ1Njc4OWFiY2RlZmdoaWo=." + key, false}, // not a term
		{"amq.rabbitmq.reply-to.g3cDYWJj." + key, false},                     // an atom, not a pid
		{pidAddress(88, 118, "rabbit@localhost", 1, key), false},
		{pidAddress(88, 118, "reply@abc", 1, key), false},
		{pidAddress(88, 118, "reply", 1, key), false},
		{pidAddress(88, 118, "", 1, key), false},
		{pidAddress(88, 118, "reply@1", 0x7fffffff, key), false},
		{pidAddress(88, 118, "reply@1", 1, ""), false},
		{pidAddress(88, 118, "reply@1", 1, "a.b"), false},
		{"amq.rabbitmq.reply-to.x", false},
		{"amq.rabbitmq.reply-to.", false},
		{"amq.rabbitmq.reply-to", false},
		{"amq.rabbitmq.reply-to.." + key, false},
		{"queue", false},
	} {
		if got := DirectAddressWellFormed(tc.addr); got != tc.ok {
			t.Errorf("DirectAddressWellFormed(%q) = %v, want %v", tc.addr, got, tc.ok)
		}
	}
}

func FuzzDirectAddressWellFormed(f *testing.F) {
	f.Add("amq.rabbitmq.reply-to.g1h2AA9yZXBseUAxMTAzNjEwMTIAACGnAAAAAGsWR3U=.EDMgIKky/F1ZANQZfZswjw==")
	f.Add("amq.rabbitmq.reply-to.x.y")
	f.Fuzz(func(t *testing.T, s string) { _ = DirectAddressWellFormed(s) })
}
