//go:build !unix

package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// lockFile takes the lock by creating path exclusively, waiting for it
// within ctx, and returns its release (which removes the file). A process
// that dies holding it leaves the file behind: remove it by hand.
func lockFile(ctx context.Context, path string) (func(), error) {
	for {
		f, err := os.OpenFile(path+".held", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path + ".held") }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: lock %s: %w", runtime.ErrRegistryUnavailable, path, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
