package input

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// MaxFileSize is the most the generator reads of one file (a manifest, a
// schema file, a file a $ref names): a larger one is refused with
// ErrTooLarge, never read whole.
const MaxFileSize = 8 << 20

var (
	// ErrTooLarge is the error reading a file larger than MaxFileSize.
	ErrTooLarge = fmt.Errorf("larger than %d MiB, the most the generator reads of a file", MaxFileSize>>20)
	// ErrNotRegular is the error reading what is not a regular file (a
	// device such as /dev/zero, a named pipe, a socket, a directory): it
	// is not opened.
	ErrNotRegular = errors.New("not a regular file")
	// ErrOutsideModule is the error reading, for a manifest imported from
	// a Go module, a file outside that module's directory: a schema: that
	// is absolute or climbs out with ../, a $ref that does, a symlink
	// that points out, a manifest: that climbs out. Such a file is not
	// read.
	ErrOutsideModule = errors.New("outside the module")
)

// outsideError is ErrOutsideModule naming the module.
type outsideError struct{ module string }

func (e *outsideError) Error() string {
	return fmt.Sprintf("outside the module %s (a module's manifest reads only the module's own files)", e.module)
}

func (e *outsideError) Is(target error) bool { return target == ErrOutsideModule }

// readFile reads the file name from src: a regular file of at most
// MaxFileSize bytes. On a file system that can say what a name is without
// opening it (fs.StatFS: OS), what is not a regular file is refused
// unopened (opening a named pipe would wait for a writer); elsewhere it is
// refused once open, unread. The size is checked again while reading, for
// a file that grows or does not say.
func readFile(src fs.FS, name string) ([]byte, error) {
	if sfs, ok := src.(fs.StatFS); ok {
		st, err := sfs.Stat(name)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				// As reading it would say: open x: no such file or directory.
				return nil, &fs.PathError{Op: "open", Path: pe.Path, Err: pe.Err}
			}
			return nil, err
		}
		if err := readable(name, st); err != nil {
			return nil, err
		}
	}
	f, err := src.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := readable(name, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	return data, nil
}

// readable refuses what is not a regular file, and one that says it is
// larger than MaxFileSize.
func readable(name string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	if st.Size() > MaxFileSize {
		return &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	return nil
}

// Within reports whether the name is the directory root (a name) or
// under it.
func Within(root, name string) bool {
	return root == "." || name == root || strings.HasPrefix(name, root+"/")
}

// realNamer is a file system that can say where a name leads once its
// symlinks are followed (OS).
type realNamer interface {
	realName(name string) (string, error)
}

// confined reports why name may not be read for the module whose
// directory is root (module is its path, for the error), nil when it may:
// it must be under root, also once symlinks are followed (when src can
// follow them).
func confined(src fs.FS, module, root, name string) error {
	if !Within(root, name) {
		return &fs.PathError{Op: "open", Path: name, Err: &outsideError{module: module}}
	}
	rn, ok := src.(realNamer)
	if !ok {
		return nil
	}
	realRoot, err := rn.realName(root)
	if err != nil {
		return nil // the read fails on its own
	}
	real, err := rn.realName(name)
	if err != nil {
		return nil
	}
	if !Within(realRoot, real) {
		return &fs.PathError{Op: "open", Path: name, Err: &outsideError{module: module}}
	}
	return nil
}

// realName is name with its symlinks followed.
func (osFS) realName(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	p, err := filepath.EvalSymlinks(native(name))
	if err != nil {
		return "", err
	}
	return Name(p)
}
