package jsoncheck

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fuzzOrder has the field kinds generated payload types have: strings,
// named strings, pointers, time.Time, float64, int64, slices of structs,
// maps, json.RawMessage.
type fuzzOrder struct {
	ID     string              `json:"order_id"`
	Email  *string             `json:"email,omitempty"`
	At     time.Time           `json:"placed_at"`
	Status fuzzStatus          `json:"status"`
	Total  float64             `json:"total"`
	Qty    int64               `json:"qty"`
	Items  []fuzzItem          `json:"items"`
	Tags   map[string]int64    `json:"tags,omitempty"`
	Extra  json.RawMessage     `json:"extra,omitempty"`
	Opt    *fuzzItem           `json:"opt"`
	Any    any                 `json:"any"`
	Nested map[string]fuzzItem `json:"nested"`
}

type fuzzStatus string

type fuzzItem struct {
	Sku   string   `json:"sku"`
	Price float64  `json:"price"`
	N     *int64   `json:"n,omitempty"`
	List  []string `json:"list"`
}

var unmarshalSeeds = []string{
	`{"order_id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","email":"ada@example.com","placed_at":"2026-11-30T06:00:00.123Z","status":"placed","total":61.5,"qty":3,"items":[{"sku":"ABC-1","price":10.25,"n":2,"list":["a"]}],"tags":{"x":1},"extra":{"a":[1,2]},"opt":null,"any":[1,"x",{"y":null}],"nested":{"k":{"sku":"S"}}}`,
	`{"n":1.0}`, `{"total":1e400}`, `{"ORDER_ID":"x","Status":"paid"}`, `{"items":[{"sku":"a"}],"items":[]}`, "{\"order_id\":\"a\xffb\"}",
	`{"order_id":"\ud800\u00e9\n"}`, `{"qty":01}`, `{"qty":1,}`, `{"qty":1} x`, `{"total":-0}`, `{"qty":null,"opt":null}`,
	`{"qty":9223372036854775808}`, `{"email":"x","email":null}`, `{"order_id":1}`, `[1]`, `{"qty":1}{"qty":2}`, `{"qty":1e2}`,
	`{"total":.5}`, ` {"qty" : 1 } `, `{"placed_at":"2026-11-30"}`, `{"placed_at":"2026-11-30T06:00:00+01:00"}`, `{"placed_at":null}`,
	`{"tags":{"a":1,"a":2}}`, `{"extra":nul}`, `{"any":1e999}`, `{"any":-0.0e-0}`, `"x"`, `null`, ``, `{`, `{"a":"\x01"}`,
	`{"order_id":"\u0000"}`, `{"status":"\"q\""}`, `{"nested":{"k":null}}`, `{"opt":{"list":null}}`, `{"ıtems":[]}`, `{"K":1}`,
}

// checkUnmarshal compares unmarshal with json.Unmarshal on body.
func checkUnmarshal(t *testing.T, body []byte) {
	var got, want fuzzOrder
	ok := unmarshal(body, reflect.ValueOf(&got))
	err := json.Unmarshal(body, &want)
	if err != nil {
		want = fuzzOrder{} // what DecodeChecked leaves
	}
	if ok != (err == nil) {
		t.Fatalf("%q: unmarshal says %v, encoding/json %v", body, ok, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: unmarshal made %+v, encoding/json %+v", body, got, want)
	}
}

// The fast unmarshal takes what encoding/json takes, to the same value, and
// refuses what it refuses, on bodies at encoding/json's edges.
func TestUnmarshalIsEncodingJSONs(t *testing.T) {
	for _, s := range unmarshalSeeds {
		checkUnmarshal(t, []byte(s))
	}
	// Past fastMaxDepth the body is encoding/json's alone.
	deep := `{"any":` + strings.Repeat("[", fastMaxDepth+4) + strings.Repeat("]", fastMaxDepth+4) + `}`
	if DepthAtMost([]byte(deep), fastMaxDepth) {
		t.Fatalf("a body nested %d deep is at most %d", fastMaxDepth+5, fastMaxDepth)
	}
	checkUnmarshal(t, []byte(deep))
}

func FuzzDecodeCheckedUnmarshal(f *testing.F) {
	for _, s := range unmarshalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkUnmarshal(t, body) })
}
