package input

import (
	"path"
	"path/filepath"
	"strings"
)

// Name is the name in OS of the file at the operating system path p (made
// absolute against the working directory): /srv/x.json is srv/x.json, the
// root is ".".
func Name(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return rootless(filepath.ToSlash(abs)), nil
}

// native is the operating system path of the name in OS.
func native(name string) string {
	if filepath.VolumeName(filepath.FromSlash(name)) != "" {
		return filepath.FromSlash(name) // C:/x on Windows
	}
	if name == "." {
		return string(filepath.Separator)
	}
	return filepath.FromSlash("/" + name)
}

// Resolve is the name of the file that p (slash-separated, as a manifest's
// schema: writes it) names from the directory dir (a name): p itself when
// it is absolute, so that a schema: given as an absolute path keeps its
// relative $refs working; else p joined to dir.
func Resolve(dir, p string) string {
	if isAbs(p) {
		return rootless(p)
	}
	return Join(dir, p)
}

// Join is the name of rel (slash-separated, relative even when it starts
// with a slash, as a $ref's path is joined) from the directory dir: like
// filepath.Join, ".." stops at the root.
func Join(dir, rel string) string {
	return rootless(path.Join("/", dir, rel))
}

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || filepath.IsAbs(filepath.FromSlash(p))
}

// rootless is the clean name of the absolute slash-separated path p.
func rootless(p string) string {
	p = strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(p, "/")), "/")
	if p == "" {
		return "."
	}
	return p
}
