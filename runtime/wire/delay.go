package wire

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// The binary delay topology (docs/design.md, "Delayed delivery"): DelayLevels levels,
// level n a topic exchange and a queue, both named DelayLevel(prefix, n),
// whose x-message-ttl is 2^n seconds and which dead-letters to level n−1's
// exchange (level 0's to the delivery exchange, DelayDelivery(prefix)). A
// delay of s whole seconds is written in binary into the routing key,
// DelayRoutingKey(s, exchange): 28 words "0" or "1", the highest bit
// first, then the destination exchange's name. Level n's exchange binds
// its own queue with DelayLevelPattern(n, true), a 1 in bit n, and passes
// the message down to level n−1 with DelayLevelPattern(n, false). The
// delivery exchange binds every destination exchange E (an
// exchange-to-exchange binding) with DelayDeliveryPattern(E). The
// message's own routing key rides in its BCC header, which the broker
// routes on at every hop, keeps through dead-lettering and never shows a
// consumer; so E routes it as it routes a normal publish.
const (
	// DelayLevels is how many levels the topology has: a delay of up to
	// 2^28 − 1 seconds (8.5 years).
	DelayLevels = 28
	// MaxDelay is the longest delay the topology holds.
	MaxDelay = (1<<DelayLevels - 1) * time.Second
	// DelayPrefix names the delay topology unless the connection and the
	// topology name another (its last word is always "delay"):
	// acemq.delay.00 … acemq.delay.27 and acemq.delay.delivery.
	DelayPrefix = "acemq.delay"
	// DelayDeliverySuffix ends the delivery exchange's name.
	DelayDeliverySuffix = ".delivery"
	// DelayPrefixSuffix ends every delay prefix.
	DelayPrefixSuffix = ".delay"
)

// The headers of a delayed message.
const (
	// HeaderDelayUntil is when a delayed message is due, RFC 3339 UTC
	// with milliseconds, whole seconds after its publish: written on a
	// delayed publish and kept, so a consumer or an operator can tell how
	// late it arrived. A message an outbox stores with it is published into
	// the delay topology by its relay, for the time left.
	HeaderDelayUntil = "x-acemq-delay-until"
	// HeaderDelayRoutingKey is a delayed message's own routing key: it
	// arrives with the delay routing key, and the runtime gives the handler
	// this one (Message.RoutingKey).
	HeaderDelayRoutingKey = "x-acemq-delay-routing-key"
	// HeaderBCC is RabbitMQ's sender-selected distribution header: its
	// routing keys are routed on like the publish's own, kept through
	// dead-lettering, and the header is removed before any queue holds the
	// message.
	HeaderBCC = "BCC"
)

// DelayLevel is the name of level n's exchange and queue:
// <prefix>.<n as two digits>, acemq.delay.07.
func DelayLevel(prefix string, n int) string {
	if n < 10 {
		return prefix + ".0" + strconv.Itoa(n)
	}
	return prefix + "." + strconv.Itoa(n)
}

// DelayDelivery is the name of the delivery exchange: <prefix>.delivery.
func DelayDelivery(prefix string) string { return prefix + DelayDeliverySuffix }

// DelayLevelTTL is level n's x-message-ttl in milliseconds, 2^n seconds.
func DelayLevelTTL(n int) int64 { return int64(1000) << n }

// CheckDelayPrefix refuses a prefix that cannot name a delay topology:
// empty, with an empty word, a topic wildcard (* or #), or whose last word
// is not "delay" (so that a level's name reads as one anywhere:
// IsDelayLevel).
func CheckDelayPrefix(prefix string) error {
	words := strings.Split(prefix, ".")
	if len(prefix) > 200 || !strings.HasSuffix(prefix, DelayPrefixSuffix) || strings.ContainsAny(prefix, "*#") || len(words) < 2 {
		return fmt.Errorf("delay prefix %q: write words separated by dots, without * or #, ending in %s, at most 200 bytes (the default is %s)", prefix, DelayPrefixSuffix, DelayPrefix)
	}
	for _, w := range words {
		if w == "" {
			return fmt.Errorf("delay prefix %q has an empty word", prefix)
		}
	}
	return nil
}

// IsDelayLevel reports whether name is a level of a delay topology: words,
// the last but one "delay", the last two digits from 00 to 27. Its
// expiry is the delay working, not a death.
func IsDelayLevel(name string) bool {
	_, _, ok := DelayLevelOf(name)
	return ok
}

// DelayLevelOf reads a level's name back to its prefix and level.
func DelayLevelOf(name string) (prefix string, n int, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || len(name)-i != 3 {
		return "", 0, false
	}
	d := name[i+1:]
	if d[0] < '0' || d[0] > '9' || d[1] < '0' || d[1] > '9' {
		return "", 0, false
	}
	n = int(d[0]-'0')*10 + int(d[1]-'0')
	prefix = name[:i]
	if n >= DelayLevels || !strings.HasSuffix(prefix, DelayPrefixSuffix) {
		return "", 0, false
	}
	return prefix, n, true
}

// ErrDelayTooLong is the error of a delay past MaxDelay.
var ErrDelayTooLong = errors.New("delay too long")

// DelaySeconds is d in whole seconds, rounded up (a delayed message is
// never due before d has passed): 1ms is 1, 1s is 1, 1.001s is 2. A delay
// of zero or less is 0, which publishes directly. A delay past MaxDelay
// is an error matching ErrDelayTooLong.
func DelaySeconds(d time.Duration) (int64, error) {
	if d <= 0 {
		return 0, nil
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	if s > int64(MaxDelay/time.Second) {
		return 0, fmt.Errorf("%w: %s is %d s, past the delay topology's %d s (2^%d − 1, %s)", ErrDelayTooLong, d, s, int64(MaxDelay/time.Second), DelayLevels, MaxDelay)
	}
	return s, nil
}

// DelayTopLevel is the level a delay of s seconds (1 ≤ s < 2^28) is
// published into: its highest bit. The levels above it would pass the
// message straight down.
func DelayTopLevel(s int64) int { return bits.Len64(uint64(s)) - 1 }

// DelayRoutingKey is the routing key of a delay of s seconds to exchange:
// 28 words, bit 27 of s first and bit 0 last, each "0" or "1", then the
// exchange's name: 13 s to "orders" is
// 0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.0.1.orders.
func DelayRoutingKey(s int64, exchange string) string {
	var b strings.Builder
	b.Grow(2*DelayLevels + len(exchange))
	for n := DelayLevels - 1; n >= 0; n-- {
		if s>>n&1 == 1 {
			b.WriteString("1.")
		} else {
			b.WriteString("0.")
		}
	}
	b.WriteString(exchange)
	return b.String()
}

// ParseDelayRoutingKey reads a delay routing key back to its seconds and
// destination exchange; ok is false for any other key.
func ParseDelayRoutingKey(key string) (s int64, exchange string, ok bool) {
	if len(key) < 2*DelayLevels+1 {
		return 0, "", false
	}
	for n := 0; n < DelayLevels; n++ {
		bit, dot := key[2*n], key[2*n+1]
		if dot != '.' || bit != '0' && bit != '1' {
			return 0, "", false
		}
		s = s<<1 | int64(bit-'0')
	}
	return s, key[2*DelayLevels:], true
}

// DelayLevelPattern is the binding key of level n's exchange: with hold,
// the one that binds level n's queue (bit n is 1); without, the one that
// passes the message down to level n−1's exchange, or level 0's to the
// delivery exchange (bit n is 0). 27 − n words "*", then the bit, then
// "#": level 2's are *.*.*.…(25).1.# and ….0.#.
func DelayLevelPattern(n int, hold bool) string {
	bit := "0.#"
	if hold {
		bit = "1.#"
	}
	return strings.Repeat("*.", DelayLevels-1-n) + bit
}

// DelayDeliveryPattern is the binding key with which the delivery
// exchange binds a destination exchange: 28 words "*", then the
// exchange's name.
func DelayDeliveryPattern(exchange string) string {
	return strings.Repeat("*.", DelayLevels) + exchange
}

// CheckDelayDestination refuses what the delay topology cannot deliver: the
// default exchange (nothing can be bound to it), an exchange name with a
// topic wildcard or an empty word (it is words of the delivery exchange's
// binding key), and a routing key that a level's binding would also match
// (a word "0" or "1" among its first 28 words, or more than 28 words):
// it rides in BCC and every level routes on it too.
func CheckDelayDestination(exchange, key string) error {
	if exchange == "" {
		return errors.New("a delayed message goes to a named exchange: the default exchange cannot be bound to the delay topology's delivery exchange; publish to an exchange bound to the queue")
	}
	if len(exchange) > 255-2*DelayLevels {
		return fmt.Errorf("exchange %q is %d bytes: a delayed message's exchange has at most %d (the delay routing key is 2×%d bytes and the name, at most 255)", exchange, len(exchange), 255-2*DelayLevels, DelayLevels)
	}
	if strings.ContainsAny(exchange, "*#") || strings.HasPrefix(exchange, ".") || strings.HasSuffix(exchange, ".") || strings.Contains(exchange, "..") {
		return fmt.Errorf("exchange %q: a delayed message's exchange name is words of a topic binding key: no * or #, no empty word", exchange)
	}
	words := strings.Split(key, ".")
	if len(words) > DelayLevels {
		return fmt.Errorf("routing key %q has %d words: a delayed message's routing key has at most %d (the delay topology routes on it at every level)", key, len(words), DelayLevels)
	}
	for i, w := range words {
		if w == "0" || w == "1" {
			return fmt.Errorf("routing key %q: word %d is %q, which a level of the delay topology would route on (its bindings match 0 and 1 in the first %d words); use another word", key, i+1, w, DelayLevels)
		}
	}
	return nil
}
