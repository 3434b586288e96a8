package agent

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"testing"
)

// BenchmarkCommandLargeOutput measures what reading a worker's large
// output costs its host: a [Command] whose program writes a JSON string,
// or text, of size bytes. It reports the bytes allocated per byte of the
// output.
func BenchmarkCommandLargeOutput(b *testing.B) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		b.Skip("no sh to run the worker")
	}
	const size = 8 << 20
	for _, kind := range []string{"json-string", "text"} {
		b.Run(fmt.Sprintf("%s/%dMB", kind, size>>20), func(b *testing.B) {
			script := fmt.Sprintf(`head -c %d /dev/zero | tr '\0' x`, size)
			if kind == "json-string" {
				script = `printf '"'; ` + script + `; printf '"'`
			}
			c := &Command{Argv: []string{sh, "-c", "cat >/dev/null; " + script}}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				res, err := c.Run(context.Background(), Request{TaskID: "t"})
				if err != nil {
					b.Fatal(err)
				}
				if s, _ := res.Output.(string); len(s) != size {
					b.Fatalf("output of %d bytes, want %d", len(s), size)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/size, "B/output-B")
		})
	}
}
