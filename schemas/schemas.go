// Package schemas holds the JSON Schema of the acemq-gen manifest
// (manifest.schema.json), embedded so that the generator validates every
// manifest against the very file editors use for completion.
package schemas

import _ "embed"

// ManifestURL is the $id of the manifest schema.
const ManifestURL = "https://github.com/acemq/acemq-go/schemas/manifest.schema.json"

// Manifest is the text of manifest.schema.json.
//
//go:embed manifest.schema.json
var Manifest []byte
