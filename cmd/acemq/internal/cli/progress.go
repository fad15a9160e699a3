package cli

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
)

// bar is a progress bar on a terminal, plain lines every 1000 messages
// elsewhere (lines only when plain is set), or nothing.
type bar struct {
	pb    *progressbar.ProgressBar
	plain io.Writer
	what  string
	total int
}

// progress makes the bar for reading total messages; on a terminal it is
// drawn on stderr (stdout keeps the table clean).
func (e *env) progress(tty bool, total int, what string) *bar {
	if !tty || total < 100 {
		return &bar{}
	}
	return &bar{total: total, pb: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("msg"),
		progressbar.OptionThrottle(100e6),
		progressbar.OptionClearOnFinish(),
	)}
}

// lines makes plain progress lines on w, one per 1000 messages.
func lines(w io.Writer, total int, what string) *bar {
	return &bar{plain: w, what: what, total: total}
}

func (b *bar) step(n int) {
	if n > b.total {
		// More to look at than the bar was made for (a --limit with a
		// --where that matches fewer).
		b.total = n
		if b.pb != nil {
			b.pb.ChangeMax(n)
		}
	}
	switch {
	case b.pb != nil:
		_ = b.pb.Set(n)
	case b.plain != nil && n%1000 == 0:
		fmt.Fprintf(b.plain, "%s: %d of %d\n", b.what, n, b.total)
	}
}

func (b *bar) done() {
	if b.pb != nil {
		_ = b.pb.Finish()
	}
}
