package runtime

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/google/uuid"
)

// A fresh message's x-acemq-id and x-acemq-first-seen are made together,
// in one string (docs/performance.md, "The publisher's CPU a message"):
// the id is a UUIDv7 as google/uuid's NewV7 makes it, the first-seen the
// same instant as formatTime writes it.

// idLen and seenLen are the lengths of an id's text and of a first-seen.
const (
	idLen   = 36 // xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx
	seenLen = len(firstSeenLayout)
)

// idRandBlock is how many random bytes are read from crypto/rand at once:
// eight an id.
const idRandBlock = 512

// ids is the process's UUIDv7 state: the last time and sequence handed
// out (every id is greater than the one before it, as NewV7's are) and
// random bytes read ahead.
var ids struct {
	mu   sync.Mutex
	last int64 // milliseconds << 12 | sequence
	rnd  [idRandBlock]byte
	off  int
}

// newIDAndSeen returns a new x-acemq-id made at now and now as
// x-acemq-first-seen, both cut from one allocation.
func newIDAndSeen(now time.Time) (id, seen string) {
	var buf [idLen + seenLen]byte
	if !putV7((*[idLen]byte)(buf[:idLen]), now) {
		return uuid.NewString(), formatTime(now)
	}
	if b := appendFirstSeen(buf[idLen:idLen], now); len(b) != seenLen {
		return string(buf[:idLen]), string(b) // a year past 9999: not in buf
	}
	s := string(buf[:])
	return s[:idLen], s[idLen:]
}

// newID is a new UUIDv7's text.
func newID() string {
	var b [idLen]byte
	if !putV7(&b, time.Now()) {
		return uuid.NewString()
	}
	return string(b[:])
}

// putV7 writes a UUIDv7 of now into dst: NewV7's layout, its time and
// sequence (milliseconds, then the nanoseconds within the millisecond over
// 256, or one more than the last when that is not greater), random bytes
// from crypto/rand, and its text as UUID.String writes it. False when
// crypto/rand failed.
func putV7(dst *[idLen]byte, now time.Time) bool {
	var u uuid.UUID
	nano := now.UnixNano()
	milli := nano / int64(time.Millisecond)
	t := milli<<12 + (nano-milli*int64(time.Millisecond))>>8
	ids.mu.Lock()
	if t <= ids.last {
		t = ids.last + 1
	}
	ids.last = t
	if ids.off == 0 || ids.off == len(ids.rnd) {
		if _, err := rand.Read(ids.rnd[:]); err != nil {
			ids.off = 0
			ids.mu.Unlock()
			return false
		}
		ids.off = 0
	}
	copy(u[8:], ids.rnd[ids.off:ids.off+8])
	ids.off += 8
	ids.mu.Unlock()
	milli, seq := t>>12, t&0xfff
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(milli>>40), byte(milli>>32), byte(milli>>24), byte(milli>>16), byte(milli>>8), byte(milli)
	u[6], u[7] = 0x70|byte(seq>>8)&0x0f, byte(seq)
	u[8] = u[8]&0x3f | 0x80 // the variant, 10
	hexUUID(dst, u)
	return true
}

// hexUUID writes u into dst as UUID.String does.
func hexUUID(dst *[idLen]byte, u uuid.UUID) {
	const digits = "0123456789abcdef"
	j := 0
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = digits[b>>4], digits[b&0x0f]
		j += 2
	}
}

// appendFirstSeen appends t in firstSeenLayout, in UTC, as Format writes
// it, without Format's layout parser for the years 0 to 9999.
func appendFirstSeen(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, firstSeenLayout)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	dst = append(dst, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
	dst = appendTwo(dst, int(month), '-')
	dst = appendTwo(dst, day, 'T')
	dst = appendTwo(dst, hour, ':')
	dst = appendTwo(dst, minute, ':')
	dst = appendTwo(dst, sec, '.')
	return append(dst, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// appendTwo appends n's two digits, then sep.
func appendTwo(dst []byte, n int, sep byte) []byte {
	return append(dst, byte('0'+n/10), byte('0'+n%10), sep)
}
