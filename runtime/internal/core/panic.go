package core

import (
	"fmt"
	"path"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// PanicError is a handler's panic, turned into a Retry. Its text — what
// x-acemq-error carries, and so a dead letter's reason once the attempts
// run out — is "handler panicked: <value> (at <function> <file>:<line>)",
// the frame where the panic was raised; Stack is the whole goroutine stack,
// which the consumer logs at Error.
type PanicError struct {
	Value any
	// Frame is the function and file:line that panicked, outside Go's own
	// runtime package (a nil map write names the handler's line, not
	// runtime.mapassign).
	Frame string
	Stack []byte
}

func (e *PanicError) Error() string {
	if e.Frame == "" {
		return fmt.Sprintf("handler panicked: %v", e.Value)
	}
	return fmt.Sprintf("handler panicked: %v (at %s)", e.Value, e.Frame)
}

// Unwrap returns the panic value when it is an error (panic(err)).
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// NewPanicError describes the panic whose value v a deferred recover just
// took: the frame that raised it and the stack. It must be called in that
// deferred function, while the panicking frames are still on the stack
// (acemqtest.Call uses it to report a panic as the consumer does).
func NewPanicError(v any) *PanicError {
	return &PanicError{Value: v, Frame: panicFrame(), Stack: debug.Stack()}
}

// panicFrame finds the frame that raised the panic: the first frame below
// runtime.gopanic that is not Go's runtime package. Its file is shortened to
// the last directory and file name.
func panicFrame() string {
	pcs := make([]uintptr, 64)
	n := goruntime.Callers(1, pcs)
	frames := goruntime.CallersFrames(pcs[:n])
	seenPanic := false
	for {
		f, more := frames.Next()
		if f.Function == "runtime.gopanic" {
			seenPanic = true
		} else if seenPanic && !strings.HasPrefix(f.Function, "runtime.") {
			dir, file := path.Split(f.File)
			short := path.Join(path.Base(dir), file)
			fn := f.Function
			if i := strings.LastIndex(fn, "/"); i >= 0 {
				fn = fn[i+1:]
			}
			return fmt.Sprintf("%s %s:%d", fn, short, f.Line)
		}
		if !more {
			return ""
		}
	}
}

// PanicLogEvery is how often a consumer logs a panic's stack at most; the
// panics in between are counted in the next record's "suppressed".
var PanicLogEvery = 10 * time.Second

// PanicLimiter rate-limits a consumer's panic stacks.
type PanicLimiter struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// Allow reports whether this panic's stack is logged, and how many were
// not since the last one that was.
func (l *PanicLimiter) Allow(now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < PanicLogEvery {
		l.suppressed++
		return false, 0
	}
	l.last, suppressed, l.suppressed = now, l.suppressed, 0
	return true, suppressed
}
