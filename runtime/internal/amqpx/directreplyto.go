package amqpx

import (
	"encoding/base64"
	"encoding/binary"
	"strings"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

// DirectAddressWellFormed reports whether replyTo, which begins with
// "amq.rabbitmq.reply-to.", has the shape of an address the broker made
// (its rewriting of a requester's amq.rabbitmq.reply-to): the base64 of an
// Erlang pid whose node is "reply@<digits>" (the hash of a node of the
// cluster, as RabbitMQ 3.10 to 4.x encode it), then "." and a key.
// RabbitMQ decodes that pid when a reply is published to the address, and
// one it cannot decode (not base64, not a pid, another node shape, a pid
// number over 15 bits) makes it close the publishing connection with 541
// INTERNAL_ERROR (seen on 3.10): a request forging one would take the
// responder's connection down on every delivery. A well-formed address
// whose node hash no node of the cluster has does the same; that the
// client cannot see (docs/reliability.md, "Hostile reply_to addresses").
func DirectAddressWellFormed(replyTo string) bool {
	rest, ok := strings.CutPrefix(replyTo, core.DirectReplyTo+".")
	if !ok {
		return false
	}
	pidEnc, key, ok := strings.Cut(rest, ".")
	if !ok || key == "" || strings.Contains(key, ".") {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(pidEnc)
	if err != nil || len(b) < 3 || b[0] != 131 {
		return false
	}
	tag, b := b[1], b[2:]
	var node []byte
	switch b[0] {
	case 118, 100: // ATOM_UTF8_EXT, ATOM_EXT: a 2-byte length
		if len(b) < 3 {
			return false
		}
		n := int(binary.BigEndian.Uint16(b[1:]))
		if len(b) < 3+n {
			return false
		}
		node, b = b[3:3+n], b[3+n:]
	case 119, 115: // SMALL_ATOM_UTF8_EXT, SMALL_ATOM_EXT: a 1-byte length
		if len(b) < 2 {
			return false
		}
		n := int(b[1])
		if len(b) < 2+n {
			return false
		}
		node, b = b[2:2+n], b[2+n:]
	default:
		return false
	}
	digits, ok := strings.CutPrefix(string(node), "reply@")
	if !ok || digits == "" || len(digits) > 20 || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	switch tag {
	case 88: // NEW_PID_EXT: ID, Serial, Creation, 4 bytes each
		if len(b) != 12 {
			return false
		}
	case 103: // PID_EXT: ID, Serial 4 bytes, Creation 1
		if len(b) != 9 {
			return false
		}
	default:
		return false
	}
	// A pid's ID: 15 bits in old Erlang, up to 28 in today's: RabbitMQ
	// 4.3 made reply@… addresses with IDs past 32767 once its node had run
	// a while (36,332), which a 15-bit rule parked as forged.
	return binary.BigEndian.Uint32(b) < 1<<28
}
