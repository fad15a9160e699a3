package consume

import (
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
)

// A rung queue found missing (a copy sent to it came back unroutable: a
// topology declared before spill rungs existed, or a consumer that does not
// declare and whose topology someone else owns) is remembered for
// rungProbe: meanwhile every wait for it is held in memory at once, with no
// publish tried and no line logged per message. Once rungProbe has passed,
// one wait tries the rung again (the probe); if it is still missing, one
// WARN line says how many waits were held in memory since the last line.
// A copy the rung takes forgets it.

// rungProbe is how long a missing rung is taken as missing before the next
// wait tries it again.
const rungProbe = 30 * time.Second

// missingRungs are a consumer's rungs found missing, by name.
type missingRungs struct {
	mu    sync.Mutex
	rungs map[string]*missingRung
}

// missingRung is one rung found missing.
type missingRung struct {
	probeAt time.Time // when the next wait tries the rung again
	logged  time.Time // the last log line
	held    int       // waits held in memory since the last log line
}

// skip reports whether a wait for rung is to be held in memory without
// trying the rung: it was found missing and its probe is not due. A due
// probe is this wait's, and the next one is due a probe interval later.
func (m *missingRungs) skip(rung string, now time.Time, probe time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rungs[rung]
	switch {
	case r == nil:
		return false
	case now.Before(r.probeAt):
		r.held++
		return true
	default:
		r.probeAt = now.Add(probe)
		return false
	}
}

// missing notes a copy that rung did not take, and returns how many waits
// to log as held in memory since the last line, or 0 when no line is due
// (a copy written before the rung was found missing, coming back).
func (m *missingRungs) missing(rung string, now time.Time, probe time.Duration) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rungs[rung]
	if r == nil {
		if m.rungs == nil {
			m.rungs = map[string]*missingRung{}
		}
		m.rungs[rung] = &missingRung{probeAt: now.Add(probe), logged: now}
		return 1
	}
	r.held++
	if now.Sub(r.logged) < probe {
		return 0
	}
	n := r.held
	r.held, r.logged = 0, now
	return n
}

// found forgets rung, which took a copy, and returns how many waits were
// held in memory since the last line (-1 when it was not missing).
func (m *missingRungs) found(rung string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.rungs[rung]
	if r == nil {
		return -1
	}
	delete(m.rungs, rung)
	return r.held
}

// rungNames are a consumer's rung names by whole seconds of wait, made
// once each: a retry to a rung names its rung for every copy, and
// wire.RungQueue formats the name anew each time. A retry policy has a few
// distinct waits; past maxRungNames the names are not kept.
type rungNames struct {
	mu    sync.Mutex
	names map[int64]string
}

const maxRungNames = 64

// of is wire.RungQueue(q, d), q being the consumer's queue.
func (r *rungNames) of(q string, d time.Duration) string {
	secs := int64(d / time.Second)
	r.mu.Lock()
	defer r.mu.Unlock()
	if name, ok := r.names[secs]; ok {
		return name
	}
	name := wire.RungQueue(q, d)
	if r.names == nil {
		r.names = map[int64]string{}
	}
	if len(r.names) < maxRungNames {
		r.names[secs] = name
	}
	return name
}
