package jsoncheck

import (
	"os"
	"regexp"
	"testing"
)

// validatorVersion is the santhosh-tekuri/jsonschema release this package
// was last checked against. What here depends on the library's insides
// rather than its API:
//
//   - dateTimeFast and timeFast (datetime.go) copy its validateDateTime
//     and validateTime (format.go);
//   - emailFast (email.go) copies its validateEmail, and the hostname rule
//     it calls;
//   - isUUID (check.go) copies its validateUUID;
//   - formatNames (check.go) lists the formats its format.go asserts, and
//     loadFormats reads a compiled Schema's Format field to take each
//     one's function.
//
// The differential tests (TestDateTimeFastIsTheReferences,
// TestEmailFastIsTheReferences, TestFormatUUIDIsTheReferences and their
// fuzz targets) compare each copy with the library on their cases, but only
// on those: when the version moves, read the new release's format.go
// against each copy, update what differs, and only then this constant.
const validatorVersion = "v6.0.3"

// TestValidatorVersionIsPinned fails when the runtime's go.mod requires
// another santhosh-tekuri/jsonschema than the one validatorVersion's list
// was checked against.
func TestValidatorVersionIsPinned(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/santhosh-tekuri/jsonschema/v6 (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("runtime/go.mod does not require github.com/santhosh-tekuri/jsonschema/v6: re-read this test")
	}
	if got := string(m[1]); got != validatorVersion {
		t.Fatalf("runtime/go.mod requires santhosh-tekuri/jsonschema %s; jsoncheck's copies of its formats were checked "+
			"against %s: re-read the new format.go against dateTimeFast, timeFast, emailFast, isUUID and formatNames "+
			"(see validatorVersion's comment), then set validatorVersion to %s", got, validatorVersion, got)
	}
}
