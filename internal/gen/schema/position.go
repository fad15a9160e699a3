package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// source is a schema file's text and its parsed value, kept to place an
// error's pointer at a line and column.
type source struct {
	root *jvalue
	data []byte
}

// position is the line and column (1-based, in bytes) of the value at
// pointer ("#/properties/a") in the file at path, or 0, 0 when the file or
// the pointer is not known.
func (b *builder) position(path, pointer string) (line, col int) {
	src, ok := b.sources[path]
	if !ok {
		return 0, 0
	}
	off := src.offset(pointer)
	if off < 0 {
		return 0, 0
	}
	return textPos(src.data, off)
}

// offset is where the value at pointer starts (or a little before; see
// textPos), -1 when there is none.
func (s source) offset(pointer string) int64 {
	frag, isPtr := strings.CutPrefix(pointer, "#")
	if !isPtr || s.root == nil {
		return -1
	}
	n := pointerGet(s.root, frag)
	if n == nil {
		return -1
	}
	return n.off
}

// textPos is the line and column of the first byte at or after off that
// is not a blank, a ':' or a ',' (the decoder's offset is where the
// previous token ended).
func textPos(data []byte, off int64) (line, col int) {
	i := int(off)
	for i < len(data) && bytes.IndexByte([]byte(" \t\r\n:,"), data[i]) >= 0 {
		i++
	}
	return lineCol(data, i)
}

// lineCol is the line and column of byte i of data.
func lineCol(data []byte, i int) (line, col int) {
	i = min(max(i, 0), len(data))
	line = 1 + bytes.Count(data[:i], []byte("\n"))
	return line, i - bytes.LastIndexByte(data[:i], '\n')
}

// failJSON reports that the file at path is not JSON, at the byte where
// the decoder stopped: the one a syntax error names, or the end of the
// text.
func (b *builder) failJSON(path string, data []byte, err error) {
	e := &Error{Path: path, Pointer: "#", Construct: "json", Msg: fmt.Sprintf("not valid JSON: %v", err)}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		e.Line, e.Col = lineCol(data, int(se.Offset)-1)
	} else {
		e.Line, e.Col = lineCol(data, len(data))
	}
	b.errs = append(b.errs, e)
}

// Locate is the line and column (1-based, in bytes) of the value at
// pointer ("#/properties/a") in the JSON text data, or 0, 0 when data is
// not JSON or has nothing there.
func Locate(data []byte, pointer string) (line, col int) {
	root, err := parseJSON(data)
	if err != nil {
		return 0, 0
	}
	s := source{root: root, data: data}
	off := s.offset(pointer)
	if off < 0 {
		return 0, 0
	}
	return textPos(data, off)
}
