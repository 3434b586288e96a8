package regfile

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// maxOutputLimit bounds max_output: a program's standard output is held in
// memory and journaled whole, so a larger one is a mistake: 1 GiB.
const maxOutputLimit = 1 << 30

// sizePattern matches a size: a whole number and an optional unit.
var sizePattern = regexp.MustCompile(`^([0-9]+)\s*([A-Za-z]*)$`)

// sizeUnits are the units of a size, by their lower-case spelling: binary
// with an "i", decimal without.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
	"kb": 1e3, "mb": 1e6, "gb": 1e9,
}

// maxOutput reads the most bytes a program may write on standard output:
// a number of bytes, or a string with a unit ("64MiB", "500 KB").
func (l *loader) maxOutput(who string, n *yaml.Node) (int64, error) {
	const usage = `write a size such as "64MiB", "512KiB" or "100MB"`
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return 0, l.errorf(n, who, "max_output must be a size, not %s; %s", yamlnode.Describe(n), usage)
	}
	m := sizePattern.FindStringSubmatch(strings.TrimSpace(n.Value))
	if m == nil {
		return 0, l.errorf(n, who, "max_output %q is not a size; %s", n.Value, usage)
	}
	unit, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, l.errorf(n, who, "max_output %q: unknown unit %q; the units are B, KiB, MiB, GiB, KB, MB and GB", n.Value, m[2])
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || v > maxOutputLimit/unit {
		return 0, l.errorf(n, who, "max_output %q is more than the 1GiB a program's output may take", n.Value)
	}
	if v == 0 {
		return 0, l.errorf(n, who, "max_output %q is zero; leave it out for the default of %dMiB", n.Value, agent.DefaultMaxOutput>>20)
	}
	return v * unit, nil
}
