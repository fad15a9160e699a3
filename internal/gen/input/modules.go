package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoModules finds a module as the go command does, in OS: with a version,
// go mod download -json module@version (the module cache, fetched through
// GOPROXY when not there yet); without one, go list -m -json module in the
// importing manifest's directory, the version its go.mod requires, a
// replace directive followed (a local replacement is read where it is,
// also when go mod tidy dropped the require, which no Go file needs).
func GoModules(from, module, version string) (dir, found string, err error) {
	if version != "" {
		return goModDownload(from, module, version)
	}
	var m struct {
		Path, Version, Dir string
		Replace            *struct{ Path, Version, Dir string }
		Error              *struct{ Err string }
	}
	out, err := goJSON(from, "list", "-m", "-json", "--", module)
	if err == nil {
		err = json.Unmarshal(out, &m)
	}
	if err != nil {
		// go mod tidy drops the require of a module no Go file imports
		// (a manifest is not Go): a replace by a directory still says where.
		if dir, ok := replacedDir(from, module); ok {
			return dir, "", nil
		}
	}
	switch {
	case err != nil:
		return "", "", fmt.Errorf("module %s: %w (give version:, or require the module in go.mod: go get %s)", module, err, module)
	case m.Error != nil:
		return "", "", fmt.Errorf("module %s: %s", module, m.Error.Err)
	case m.Replace != nil && m.Replace.Dir != "":
		name, err := Name(m.Replace.Dir)
		return name, m.Version, err
	case m.Dir != "":
		name, err := Name(m.Dir)
		return name, m.Version, err
	case m.Version != "":
		return goModDownload(from, module, m.Version)
	}
	return "", "", fmt.Errorf("module %s: go list -m found no directory for it", module)
}

// replacedDir is the directory go.mod's replace directive gives module
// (one replacing every version by a directory), read with go mod edit
// -json in the directory from.
func replacedDir(from, module string) (string, bool) {
	gomod, err := goJSON(from, "env", "GOMOD")
	mod := strings.TrimSpace(string(gomod))
	if err != nil || mod == "" || mod == os.DevNull {
		return "", false
	}
	out, err := goJSON(from, "mod", "edit", "-json")
	if err != nil {
		return "", false
	}
	var f struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if json.Unmarshal(out, &f) != nil {
		return "", false
	}
	for _, r := range f.Replace {
		if r.Old.Path != module || r.Old.Version != "" || r.New.Version != "" {
			continue
		}
		dir := r.New.Path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(mod), dir)
		}
		name, err := Name(dir)
		return name, err == nil
	}
	return "", false
}

func goModDownload(from, module, version string) (string, string, error) {
	var m struct {
		Path, Version, Dir, Error string
	}
	out, err := goJSON(from, "mod", "download", "-json", "--", module+"@"+version)
	if len(out) > 0 {
		if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
			return "", "", fmt.Errorf("module %s@%s: %s", module, version, m.Error)
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("module %s@%s: %w", module, version, err)
	}
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", "", fmt.Errorf("module %s@%s: go mod download gave no directory", module, version)
	}
	name, err := Name(m.Dir)
	return name, m.Version, err
}

// goJSON runs the go command in the directory dir (a name in OS) and
// returns its standard output; its error says what go said.
func goJSON(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = native(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("a module: import needs the go command on PATH: %w", err)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out, fmt.Errorf("go %s: %s", args[0], msg)
	}
	return out, nil
}
