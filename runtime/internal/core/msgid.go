package core

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/google/uuid"
)

// A fresh message's x-acemq-id and x-acemq-first-seen are made together,
// in one string (bench/NOTES.md, "The publisher's CPU a message"):
// the id is google/uuid's UUIDv7 (NewV7FromReader, its random bits read
// ahead from crypto/rand), the first-seen the publish's instant as
// formatTime writes it.

// idLen and seenLen are the lengths of an id's text and of a first-seen.
const (
	idLen   = 36 // xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx
	seenLen = len(FirstSeenLayout)
)

// NewIDAndSeen returns a new x-acemq-id and now as x-acemq-first-seen,
// both cut from one allocation.
func NewIDAndSeen(now time.Time) (id, seen string) {
	var buf [idLen + seenLen]byte
	if !putV7((*[idLen]byte)(buf[:idLen])) {
		return uuid.NewString(), FormatTime(now)
	}
	if b := appendFirstSeen(buf[idLen:idLen], now); len(b) != seenLen {
		return string(buf[:idLen]), string(b) // a year past 9999: not in buf
	}
	s := string(buf[:])
	return s[:idLen], s[idLen:]
}

// NewID is a new UUIDv7's text.
func NewID() string {
	var b [idLen]byte
	if !putV7(&b) {
		return uuid.NewString()
	}
	return string(b[:])
}

// idRandBlock is how many random bytes are read from crypto/rand at once:
// a UUID's random part takes 16 of them.
const idRandBlock = 512

// idRand is crypto/rand read ahead a block at a time, the reader the ids'
// random bits come from (google/uuid's own pool, EnableRandPool, is a
// process-wide switch that a library must not turn on for its user).
var idRand blockReader

// blockReader hands out crypto/rand's bytes from a block it refills.
type blockReader struct {
	mu   sync.Mutex
	buf  [idRandBlock]byte
	left int // bytes of buf not yet handed out, at its end
}

func (r *blockReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(p) {
		if r.left == 0 {
			if _, err := rand.Read(r.buf[:]); err != nil {
				return n, err
			}
			r.left = len(r.buf)
		}
		c := copy(p[n:], r.buf[len(r.buf)-r.left:])
		r.left -= c
		n += c
	}
	return n, nil
}

// putV7 writes a new UUIDv7 into dst, made by google/uuid (its layout, its
// clock and its sequence: every id greater than the one before it) from
// idRand's bytes, as UUID.String writes it. False when crypto/rand failed.
func putV7(dst *[idLen]byte) bool {
	u, err := uuid.NewV7FromReader(&idRand)
	if err != nil {
		return false
	}
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

// appendFirstSeen appends t in FirstSeenLayout, in UTC, as Format writes
// it, without Format's layout parser for the years 0 to 9999.
func appendFirstSeen(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, FirstSeenLayout)
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
