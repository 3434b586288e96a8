package store

import "github.com/dagent-dev/dagent/llm"

// recordTo and replayLines are llm's: RecordFunc and ReplayLines.
var recordTo = llm.RecordFunc

func replayLines(name string, lines [][]byte) (llm.Client, error) {
	return llm.ReplayLines(name, lines)
}
