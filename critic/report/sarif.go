package report

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/jsonv"
)

// SARIF 2.1.0 as GitHub code scanning reads it:
// https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	// sarifFingerprint is the partialFingerprints key of dagent's own
	// fingerprint; the version changes if its recipe does.
	sarifFingerprint = "dagentIssueHash/v1"
	// defaultTool and defaultInformationURI describe the driver when
	// [Tool] leaves them empty.
	defaultTool           = "dagent"
	defaultInformationURI = "https://github.com/dagent-dev/dagent"
)

type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool sarifTool `json:"tool"`
		// ColumnKind says how columns count: plan positions count
		// Unicode code points.
		ColumnKind string        `json:"columnKind"`
		Results    []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Version        string      `json:"version,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string             `json:"id"`
		ShortDescription     sarifMessage       `json:"shortDescription"`
		FullDescription      sarifMessage       `json:"fullDescription"`
		Help                 sarifHelp          `json:"help"`
		DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
		Properties           sarifProperties    `json:"properties"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifHelp struct {
		Text     string `json:"text"`
		Markdown string `json:"markdown"`
	}
	sarifConfiguration struct {
		Level string `json:"level"`
	}
	sarifProperties struct {
		Tags []string `json:"tags"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarifMessage      `json:"message"`
		Locations           []sarifLocation   `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
	}
	sarifPhysicalLocation struct {
		ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
		Region           sarifRegion           `json:"region"`
	}
	sarifArtifactLocation struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
)

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s critic.Severity) string {
	switch s {
	case critic.Critical:
		return "error"
	case critic.Warning:
		return "warning"
	}
	return "note"
}

// writeSARIF prints the reports as one SARIF 2.1.0 run: one rule per check
// that was found, one result per issue. A result always has a region,
// line 1 when the issue's position is unknown, because GitHub requires
// one.
func writeSARIF(w io.Writer, files []File, opts Options) error {
	var checks []string
	for _, f := range files {
		for _, is := range f.Report.Issues {
			if !slices.Contains(checks, is.Check) {
				checks = append(checks, is.Check)
			}
		}
	}
	slices.Sort(checks)
	rules := make([]sarifRule, len(checks))
	for i, check := range checks {
		rules[i] = sarifRuleOf(check, files)
	}
	results := []sarifResult{}
	for _, f := range files {
		uri := sarifURI(f.Path, opts.Root)
		for _, is := range f.Report.Issues {
			region := sarifRegion{StartLine: 1}
			if line, col := position(is.Pos); line > 0 {
				region = sarifRegion{StartLine: line, StartColumn: col}
			}
			results = append(results, sarifResult{
				RuleID:    is.Check,
				RuleIndex: slices.Index(checks, is.Check),
				Level:     sarifLevel(is.Severity),
				Message:   sarifMessage{Text: annotation(is)},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysicalLocation{
					ArtifactLocation: sarifArtifactLocation{URI: uri},
					Region:           region,
				}}},
				PartialFingerprints: map[string]string{sarifFingerprint: fingerprint(uri, is)},
			})
		}
	}
	tool := opts.Tool
	if tool.Name == "" {
		tool.Name = defaultTool
	}
	if tool.InformationURI == "" {
		tool.InformationURI = defaultInformationURI
	}
	doc := sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{
				Name:           tool.Name,
				InformationURI: tool.InformationURI,
				Version:        tool.Version,
				Rules:          rules,
			}},
			ColumnKind: "unicodeCodePoints",
			Results:    results,
		}},
	}
	return jsonv.EncodeIndent(w, doc, "  ")
}

// sarifRuleOf describes check. A check without a rule (a reviewer's own)
// takes its name and the worst severity it was found with.
func sarifRuleOf(check string, files []File) sarifRule {
	d, ok := critic.Describe(check)
	if !ok {
		d = critic.Rule{Check: check, Title: "Check " + check, Text: "An issue the check " + check + " found.", Category: "review"}
		for _, f := range files {
			for _, is := range f.Report.Issues {
				if is.Check == check && (d.Severity == "" || is.Severity.AtLeast(d.Severity)) {
					d.Severity = is.Severity
				}
			}
		}
	}
	text, markdown := d.Text, "**"+d.Title+"**\n\n"+d.Text
	if d.Fix != "" {
		text += "\n\nFix: " + d.Fix
		markdown += "\n\n**Fix:** " + d.Fix
	}
	return sarifRule{
		ID:                   check,
		ShortDescription:     sarifMessage{Text: d.Title},
		FullDescription:      sarifMessage{Text: d.Text},
		Help:                 sarifHelp{Text: text, Markdown: markdown},
		DefaultConfiguration: sarifConfiguration{Level: sarifLevel(d.Severity)},
		Properties:           sarifProperties{Tags: []string{"dagent", "plan", d.Category}},
	}
}

// sarifURI is the artifact location of path: relative with forward
// slashes, escaped as a URI reference; an absolute path outside root is
// a file: URI.
func sarifURI(path, root string) string {
	p := repoPath(path, root)
	if filepath.IsAbs(path) && !filepath.IsLocal(filepath.FromSlash(p)) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // a Windows drive letter
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// fingerprint identifies an issue across commits: it changes when the
// file, check, task, field or message does, not when lines move.
func fingerprint(uri string, is critic.Issue) string {
	h := sha256.New()
	for _, s := range []string{uri, is.Check, is.TaskID, is.Field, is.Message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
