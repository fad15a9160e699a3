package input

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrPrevious marks an error about the previous version: not found, not
// readable, or a git failure.
var ErrPrevious = errors.New("the previous version")

// LoadPrevious reads the previous version of the manifest at manifestPath
// (acemq-gen compat --against), as Load reads a manifest: against is a
// directory holding the previous manifest (under the same file name) and
// its schemas, a manifest file, or git:REF: the manifest and the schema
// files of its directory as commit REF has them, read from git into
// memory.
func LoadPrevious(manifestPath, against string) (*Set, error) {
	if ref, ok := strings.CutPrefix(against, "git:"); ok {
		return loadGit(manifestPath, ref)
	}
	file := against
	st, err := os.Stat(against)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPrevious, err)
	}
	if st.IsDir() {
		file = filepath.Join(against, filepath.Base(manifestPath))
		if _, err := os.Stat(file); err != nil {
			return nil, fmt.Errorf("%w: %s has no %s: %w", ErrPrevious, against, filepath.Base(manifestPath), err)
		}
	}
	return LoadFile(file)
}

// loadGit reads the manifest and the schema files (.avsc, .json) of its
// directory, as commit ref has them, into memory, and loads the manifest
// from there (see commitFS); errors name them git:REF:path.
func loadGit(manifestPath, ref string) (*Set, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return nil, fmt.Errorf("%w: git:%s is not a commit: write git:REF, e.g. git:HEAD~1 or git:origin/main", ErrPrevious, ref)
	}
	abs, err := filepath.Abs(manifestPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPrevious, err)
	}
	dir := filepath.Dir(abs)
	out, err := git(dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	top := strings.TrimSpace(string(out))
	rel, err := relDir(top, dir)
	if err != nil {
		return nil, err
	}
	if _, err := git(dir, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}"); err != nil {
		return nil, fmt.Errorf("%w: git:%s: no such commit in %s", ErrPrevious, ref, top)
	}
	man := path.Join(rel, filepath.Base(abs))
	files, err := gitFiles(top, ref, rel, man)
	if err != nil {
		return nil, err
	}
	if _, ok := files[man]; !ok {
		return nil, fmt.Errorf("%w: git:%s has no %s (a new manifest has no previous version: compare with a commit that has it)", ErrPrevious, ref, man)
	}
	fsys, err := newCommitFS(top, ref, files)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPrevious, err)
	}
	return Load(fsys, Join(fsys.top, man), "git:"+ref+":"+man)
}

// relDir is dir relative to the repository's top, with slashes ("." for
// the top), symbolic links resolved on both sides.
func relDir(top, dir string) (string, error) {
	t, err1 := filepath.EvalSymlinks(top)
	d, err2 := filepath.EvalSymlinks(dir)
	if err := errors.Join(err1, err2); err != nil {
		return "", fmt.Errorf("%w: %w", ErrPrevious, err)
	}
	rel, err := filepath.Rel(t, d)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPrevious, err)
	}
	return filepath.ToSlash(rel), nil
}

// gitFiles reads, at ref, the manifest and every .avsc and .json file
// under the directory rel (paths from the repository's top, top), in one
// git cat-file process.
func gitFiles(top, ref, rel, man string) (map[string][]byte, error) {
	list, err := git(top, nil, "ls-tree", "-r", "-z", "--full-name", ref, "--", rel)
	if err != nil {
		return nil, err
	}
	var names, oids []string
	for _, e := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		meta, name, ok := strings.Cut(e, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 || fields[1] != "blob" || fields[0] == "120000" {
			continue // a submodule, a symbolic link, or nothing
		}
		if ext := strings.ToLower(path.Ext(name)); name != man && ext != ".avsc" && ext != ".json" {
			continue
		}
		names, oids = append(names, name), append(oids, fields[2])
	}
	if len(oids) == 0 {
		return map[string][]byte{}, nil
	}
	out, err := git(top, strings.NewReader(strings.Join(oids, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, name := range names {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: git cat-file: %w", ErrPrevious, err)
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: git cat-file: %q", ErrPrevious, strings.TrimSpace(header))
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("%w: git cat-file: %q", ErrPrevious, strings.TrimSpace(header))
		}
		data := make([]byte, size+1) // the content and its newline
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("%w: git cat-file: %w", ErrPrevious, err)
		}
		files[name] = data[:size]
	}
	return files, nil
}

// git runs git in dir; its error says what git said.
func git(dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("%w: --against git:... needs git on PATH: %w", ErrPrevious, err)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%w: git %s: %s", ErrPrevious, args[0], msg)
	}
	return out, nil
}
