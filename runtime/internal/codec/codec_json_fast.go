package codec

import (
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	segjson "github.com/segmentio/encoding/json"
)

// jsonFastMaxDepth bounds how deeply nested a body jsonParseFast hands
// to segmentio/encoding. Its decode into an interface scans each array
// and object once per enclosing level, so its time grows with the depth
// times the size: at 16 levels a hostile 1 MB body costs about what
// encoding/json takes (measured: 126 against 107 ms), at 256 levels nine
// times as much, at 9999 levels 1.8 s for 20 KB (encoding/json: 28 ms).
// Deeper bodies, rare in messages, are encoding/json's.
const jsonFastMaxDepth = 16

// jsonParseDoc is jsonParse, read by segmentio/encoding when it can: the
// same tree (json.Number numbers) in about half the time; a body it refuses
// or stops short of is jsonParse's to answer, so every error text is
// encoding/json's as before (TestJSONParseFastIsJSONParse,
// FuzzJSONParseFast).
func jsonParseDoc(body []byte) (any, error) {
	if doc, ok := jsonParseFast(body); ok {
		return doc, nil
	}
	return jsonParse(body)
}

// jsonParseFast reads body with segmentio/encoding's Parse, numbers as
// json.Number; false when the body nests deeper than jsonFastMaxDepth,
// when segmentio/encoding refuses it, or when anything but whitespace
// follows the value.
func jsonParseFast(body []byte) (any, bool) {
	if !jsonDepthAtMost(body, jsonFastMaxDepth) {
		return nil, false
	}
	var doc any
	rest, err := segjson.Parse(body, &doc, segjson.UseNumber|segjson.DontCopyString|segjson.DontCopyNumber)
	if err != nil || len(rest) != 0 {
		return nil, false
	}
	return doc, true
}

// jsonDepthAtMost reports whether the arrays and objects of body nest no
// deeper than limit, skipping strings (a backslash escapes the byte after
// it). It parses nothing: a body it miscounts is not JSON, and the parser
// refuses it before reaching a deeper level than the count, since both end
// a string at the same quote.
func jsonDepthAtMost(body []byte, limit int) bool { return jsoncheck.DepthAtMost(body, limit) }
