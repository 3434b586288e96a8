package jsonv_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

func ExampleDecode() {
	v, err := jsonv.Decode(strings.NewReader(`{"id": 12345678901234567890}`))
	fmt.Printf("%v %T %v\n", v, v.(map[string]any)["id"], err)
	_, err = jsonv.Decode(strings.NewReader(`{} {}`))
	fmt.Println(err)
	// Output:
	// map[id:12345678901234567890] json.Number <nil>
	// trailing data after the JSON value
}

func ExampleDecodeBytes() {
	v, _ := jsonv.DecodeBytes([]byte(`[1, "two"]`))
	fmt.Println(v)
	// Output: [1 two]
}

func ExampleMarshal() {
	b, _ := jsonv.Marshal(map[string]any{"verification": "(< a b)"})
	fmt.Println(string(b))
	// Output: {"verification":"(< a b)"}
}

func ExampleEncode() {
	_ = jsonv.Encode(os.Stdout, []string{"a&b"})
	// Output: ["a&b"]
}

func ExampleEncodeIndent() {
	_ = jsonv.EncodeIndent(os.Stdout, map[string]int{"n": 1}, "  ")
	// Output:
	// {
	//   "n": 1
	// }
}

func ExampleNormalize() {
	type hit struct {
		URL   string `json:"url"`
		Score int    `json:"score"`
	}
	v, _ := jsonv.Normalize([]hit{{URL: "https://example.com", Score: 3}})
	fmt.Printf("%v %T\n", v, v.([]any)[0].(map[string]any)["score"])
	// Output: [map[score:3 url:https://example.com]] json.Number
}

func ExampleText() {
	fmt.Println(jsonv.Text("plain"))
	fmt.Println(jsonv.Text(map[string]any{"items": []any{"a"}}))
	// Output:
	// plain
	// {"items":["a"]}
}

func ExampleAppendString() {
	b := []byte(`{"kind":`)
	b = jsonv.AppendString(b, "say \"hi\" <b>")
	fmt.Println(string(append(b, '}')))
	// Output: {"kind":"say \"hi\" <b>"}
}

func ExampleLookup() {
	v, _ := jsonv.DecodeBytes([]byte(`{"rows": [{"name": "a"}, {"name": "b"}]}`))
	name, ok := jsonv.Lookup(v, "rows.1.name")
	fmt.Println(name, ok)
	_, ok = jsonv.Lookup(v, "rows.2.name")
	fmt.Println(ok)
	// Output:
	// b true
	// false
}
