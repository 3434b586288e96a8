// Command worker implements the command workers of the data pipeline example
// (examples/pipeline). It is one program with a subcommand per worker:
//
//	worker extract    read the CSV file named by params.path
//	worker clean      drop malformed records, type the rest
//	worker totals     units and amounts per region
//	worker anomalies  rows whose amount is over params.factor (3) × the median
//	worker publish    the final Markdown report, once a review approved it
//
// Each reads one JSON request on standard input (the dagent command-worker
// protocol: task_id, input, depends, inputs, params, ...) and writes its JSON
// result on standard output. It exits 1, with the reason on standard error,
// when it cannot do its job.
//
// A worker takes its data from the request's wired inputs (the plan's
// "inputs") when there are any, else from its dependencies' outputs.
package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// request is the JSON request a command worker reads on standard input.
type request struct {
	RunID          string         `json:"run_id"`
	TaskID         string         `json:"task_id"`
	Agent          string         `json:"agent"`
	Input          string         `json:"input"`
	Attempt        int            `json:"attempt"`
	Diagnosis      string         `json:"diagnosis"`
	Depends        map[string]any `json:"depends"`
	Skipped        []string       `json:"skipped"`
	Inputs         map[string]any `json:"inputs"`
	Params         map[string]any `json:"params"`
	IdempotencyKey string         `json:"idempotency_key"`
}

var workers = map[string]func(req request) (any, error){
	"extract":   runExtract,
	"clean":     runClean,
	"totals":    runTotals,
	"anomalies": runAnomalies,
	"publish":   runPublish,
}

func main() {
	if len(os.Args) != 2 || workers[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: worker extract|clean|totals|anomalies|publish < request.json")
		os.Exit(2)
	}
	out, err := run(os.Args[1], os.Stdin)
	if err == nil {
		err = writeJSON(os.Stdout, out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(name string, stdin io.Reader) (any, error) {
	var req request
	dec := json.NewDecoder(stdin)
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("expected a JSON request on standard input, got nothing")
		}
		return nil, fmt.Errorf("reading the JSON request on standard input: %w", err)
	}
	return workers[name](req)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// value returns the wired input slot when the request has it, else the
// field key of the first dependency (by id) whose output has that key.
func value(req request, slot, key string) (any, bool) {
	if v, ok := req.Inputs[slot]; ok {
		return v, true
	}
	ids := make([]string, 0, len(req.Depends))
	for id := range req.Depends {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if m, ok := req.Depends[id].(map[string]any); ok {
			if v, ok := m[key]; ok {
				return v, true
			}
		}
	}
	return nil, false
}

// decodeInto re-decodes a JSON-shaped value into a Go type.
func decodeInto(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// need reads a value (see value) and decodes it into into.
func need(req request, slot, key, what string, into any) error {
	v, ok := value(req, slot, key)
	if !ok {
		return fmt.Errorf("no %s: wire it with inputs.%s or depend on a task whose output has %q", what, slot, key)
	}
	if err := decodeInto(v, into); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// cents rounds an amount of money to cents.
func cents(x float64) float64 { return math.Round(x*100) / 100 }

// --- extract ---

// record is one CSV data line, as read.
type record struct {
	Line   int      `json:"line"`
	Fields []string `json:"fields"`
}

type extractResult struct {
	// Path is params.path; File is the file read, relative to the
	// repository root when it is inside it.
	Path    string   `json:"path"`
	File    string   `json:"file"`
	Columns []string `json:"columns"`
	Records []record `json:"records"`
	Count   int      `json:"count"`
}

// parseCSV reads a CSV file with a header line. Records may have any number
// of fields: judging them is the clean step's job.
func parseCSV(r io.Reader) (columns []string, records []record, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	records = []record{}
	for {
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		line, _ := cr.FieldPos(0)
		if columns == nil {
			for _, f := range fields {
				columns = append(columns, strings.ToLower(strings.TrimSpace(f)))
			}
			continue
		}
		records = append(records, record{Line: line, Fields: fields})
	}
	if columns == nil {
		return nil, nil, errors.New("the file is empty: expected a header line")
	}
	return columns, records, nil
}

// exampleDir is the directory of this example (the parent of worker/), as
// compiled in; "" when the build does not record absolute source paths.
func exampleDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(filepath.Dir(file))
}

// searchDirs lists where a relative data path is looked for: the example
// directory, then the working directory and each directory above it up to
// the one holding go.mod (only the working directory when no go.mod is
// above it: the search never wanders out of the repository).
func searchDirs() []string {
	var dirs []string
	if d := exampleDir(); d != "" {
		dirs = append(dirs, d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return dirs
	}
	var up []string
	for d := wd; ; {
		up = append(up, d)
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return append(dirs, up...)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return append(dirs, wd)
		}
		d = parent
	}
}

// resolvePath finds the file a plan names by a relative path. The plan is
// untrusted text, so the path must stay inside the directory it is
// resolved in: no absolute paths, no "..".
func resolvePath(p string, dirs []string) (string, error) {
	if p == "" {
		return "", errors.New(`params.path is required: the CSV file to read, relative to the example directory, e.g. "data/sales.csv"`)
	}
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("params.path %q must be a relative path inside the example directory", p)
	}
	if !strings.EqualFold(filepath.Ext(p), ".csv") {
		return "", fmt.Errorf("params.path %q must name a .csv file", p)
	}
	for _, d := range dirs {
		candidate := filepath.Join(d, p)
		if st, err := os.Stat(candidate); err == nil && st.Mode().IsRegular() {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("params.path %q: no such file in %s", p, strings.Join(dirs, ", "))
}

// display returns file relative to the repository root (the nearest go.mod
// above it) when there is one.
func display(file string) string {
	for d := filepath.Dir(file); ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if rel, err := filepath.Rel(d, file); err == nil {
				return filepath.ToSlash(rel)
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return file
		}
		d = parent
	}
}

func runExtract(req request) (any, error) {
	p, _ := req.Params["path"].(string)
	file, err := resolvePath(p, searchDirs())
	if err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	columns, records, err := parseCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return extractResult{Path: p, File: display(file), Columns: columns, Records: records, Count: len(records)}, nil
}

// --- clean ---

// row is one clean sale.
type row struct {
	Line      int     `json:"line"`
	Date      string  `json:"date"`
	Region    string  `json:"region"`
	Product   string  `json:"product"`
	Units     int     `json:"units"`
	UnitPrice float64 `json:"unit_price"`
	Amount    float64 `json:"amount"`
}

// problem says why a record was dropped.
type problem struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

type cleanResult struct {
	Rows     []row     `json:"rows"`
	Dropped  int       `json:"dropped"`
	Problems []problem `json:"problems"`
}

var required = []string{"date", "region", "product", "units", "unit_price"}

// clean types the records and drops the malformed ones. A missing column is
// an error: no record could be read.
func clean(columns []string, records []record) (cleanResult, error) {
	idx := map[string]int{}
	for i, c := range columns {
		idx[c] = i
	}
	for _, c := range required {
		if _, ok := idx[c]; !ok {
			return cleanResult{}, fmt.Errorf("the data has no %q column; columns are %q, expected %q", c, columns, required)
		}
	}
	res := cleanResult{Rows: []row{}, Problems: []problem{}}
	for _, rec := range records {
		r, err := cleanRecord(rec, idx, len(columns))
		if err != nil {
			res.Dropped++
			res.Problems = append(res.Problems, problem{Line: rec.Line, Reason: err.Error()})
			continue
		}
		res.Rows = append(res.Rows, r)
	}
	return res, nil
}

func cleanRecord(rec record, idx map[string]int, width int) (row, error) {
	if len(rec.Fields) != width {
		return row{}, fmt.Errorf("expected %d fields, found %d", width, len(rec.Fields))
	}
	get := func(c string) string { return strings.TrimSpace(rec.Fields[idx[c]]) }
	r := row{Line: rec.Line, Date: get("date"), Region: get("region"), Product: get("product")}
	if _, err := time.Parse(time.DateOnly, r.Date); err != nil {
		return row{}, fmt.Errorf("date %q is not YYYY-MM-DD", r.Date)
	}
	if r.Region == "" {
		return row{}, errors.New("region is empty")
	}
	if r.Product == "" {
		return row{}, errors.New("product is empty")
	}
	units, err := strconv.Atoi(get("units"))
	if err != nil || units <= 0 {
		return row{}, fmt.Errorf("units %q is not a positive whole number", get("units"))
	}
	price, err := strconv.ParseFloat(get("unit_price"), 64)
	if err != nil || price <= 0 || math.IsInf(price, 0) || math.IsNaN(price) {
		return row{}, fmt.Errorf("unit_price %q is not a positive number", get("unit_price"))
	}
	r.Units, r.UnitPrice, r.Amount = units, price, cents(float64(units)*price)
	return r, nil
}

func runClean(req request) (any, error) {
	var columns []string
	var records []record
	if err := need(req, "columns", "columns", "columns", &columns); err != nil {
		return nil, err
	}
	if err := need(req, "records", "records", "records", &records); err != nil {
		return nil, err
	}
	return clean(columns, records)
}

// --- totals ---

// regionTotal sums the rows of one region.
type regionTotal struct {
	Rows   int     `json:"rows"`
	Units  int     `json:"units"`
	Amount float64 `json:"amount"`
}

type totalsResult struct {
	Regions    map[string]regionTotal `json:"regions"`
	Rows       int                    `json:"rows"`
	Units      int                    `json:"units"`
	GrandTotal float64                `json:"grand_total"`
}

func totals(rows []row) totalsResult {
	res := totalsResult{Regions: map[string]regionTotal{}}
	for _, r := range rows {
		t := res.Regions[r.Region]
		t.Rows++
		t.Units += r.Units
		t.Amount = cents(t.Amount + r.Amount)
		res.Regions[r.Region] = t
		res.Rows++
		res.Units += r.Units
		res.GrandTotal = cents(res.GrandTotal + r.Amount)
	}
	return res
}

func readRows(req request) ([]row, error) {
	var rows []row
	if err := need(req, "rows", "rows", "rows", &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

func runTotals(req request) (any, error) {
	rows, err := readRows(req)
	if err != nil {
		return nil, err
	}
	return totals(rows), nil
}

// --- anomalies ---

// anomaly is a row whose amount is unusually high.
type anomaly struct {
	row
	// Ratio is the amount divided by the median amount.
	Ratio float64 `json:"ratio"`
}

type anomaliesResult struct {
	Factor    float64   `json:"factor"`
	Median    float64   `json:"median"`
	Threshold float64   `json:"threshold"`
	Anomalies []anomaly `json:"anomalies"`
}

// median returns the median of xs (the mean of the two middle values when
// there is an even number of them).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// anomalies returns the rows whose amount is over factor × the median
// amount, in the order of rows.
func anomalies(rows []row, factor float64) (anomaliesResult, error) {
	if len(rows) == 0 {
		return anomaliesResult{}, errors.New("no rows: cannot compute a median amount")
	}
	amounts := make([]float64, len(rows))
	for i, r := range rows {
		amounts[i] = r.Amount
	}
	m := median(amounts)
	res := anomaliesResult{Factor: factor, Median: cents(m), Threshold: cents(factor * m), Anomalies: []anomaly{}}
	for _, r := range rows {
		if r.Amount > res.Threshold {
			res.Anomalies = append(res.Anomalies, anomaly{row: r, Ratio: math.Round(r.Amount/m*100) / 100})
		}
	}
	return res, nil
}

func runAnomalies(req request) (any, error) {
	factor := 3.0
	if raw, ok := req.Params["factor"]; ok {
		n, isNum := raw.(json.Number)
		f, err := n.Float64()
		if !isNum || err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("params.factor must be a positive number, found %v", raw)
		}
		factor = f
	}
	rows, err := readRows(req)
	if err != nil {
		return nil, err
	}
	return anomalies(rows, factor)
}

// --- publish ---

// decision is the review's verdict as the review task's output gives it:
// the word "approve", or an object {"approved": true, "comment": "..."}.
type decision struct {
	Approved bool
	Comment  string
}

// reviewDecision finds the review decision among the dependencies: the
// output of the dependency named by params.review (default "review"), else
// of the first dependency whose output looks like a decision.
func reviewDecision(req request) (decision, error) {
	name, _ := req.Params["review"].(string)
	if name == "" {
		name = "review"
	}
	if v, ok := req.Depends[name]; ok {
		if d, ok := parseDecision(v); ok {
			return d, nil
		}
		return decision{}, fmt.Errorf("the output of %q is not a review decision: %v", name, v)
	}
	ids := make([]string, 0, len(req.Depends))
	for id := range req.Depends {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if d, ok := parseDecision(req.Depends[id]); ok {
			return d, nil
		}
	}
	return decision{}, errors.New("no review decision in depends: publish must depend on the human_review task")
}

func parseDecision(v any) (decision, bool) {
	switch v := v.(type) {
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "approve", "approved":
			return decision{Approved: true}, true
		case "reject", "rejected":
			return decision{}, true
		}
	case map[string]any:
		approved, ok := v["approved"].(bool)
		if !ok {
			return decision{}, false
		}
		comment, _ := v["comment"].(string)
		return decision{Approved: approved, Comment: strings.TrimSpace(comment)}, true
	}
	return decision{}, false
}

// money formats an amount with a thousands separator: 3,600.00.
func money(x float64) string {
	s := strconv.FormatFloat(math.Abs(x), 'f', 2, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if x < 0 {
		b.WriteByte('-')
	}
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String() + "." + frac
}

// plural returns "1 sale", "2 sales".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func number(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// render writes the final report.
func render(title string, d decision, t totalsResult, a anomaliesResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "%s, %s, %s in total, across %s.\n\n", plural(t.Rows, "sale"), plural(t.Units, "unit"), money(t.GrandTotal), plural(len(t.Regions), "region"))

	b.WriteString("## Totals by region\n\n")
	b.WriteString("| region | sales | units | amount |\n| --- | ---: | ---: | ---: |\n")
	names := make([]string, 0, len(t.Regions))
	for name := range t.Regions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := t.Regions[name]
		fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", name, r.Rows, r.Units, money(r.Amount))
	}
	fmt.Fprintf(&b, "| **total** | %d | %d | %s |\n\n", t.Rows, t.Units, money(t.GrandTotal))

	b.WriteString("## Anomalies\n\n")
	if len(a.Anomalies) == 0 {
		fmt.Fprintf(&b, "None: no sale is over %s× the median amount (%s).\n\n", number(a.Factor), money(a.Median))
	} else {
		fmt.Fprintf(&b, "Sales over %s× the median amount (%s), that is over %s:\n\n", number(a.Factor), money(a.Median), money(a.Threshold))
		b.WriteString("| line | date | region | product | units | unit price | amount | × median |\n")
		b.WriteString("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: |\n")
		for _, x := range a.Anomalies {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %d | %s | %s | %s |\n", x.Line, x.Date, x.Region, x.Product, x.Units, money(x.UnitPrice), money(x.Amount), number(x.Ratio))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Review\n\n")
	if d.Comment != "" {
		fmt.Fprintf(&b, "Approved for publication. Reviewer's comment: %s\n", d.Comment)
	} else {
		b.WriteString("Approved for publication.\n")
	}
	return b.String()
}

func runPublish(req request) (any, error) {
	d, err := reviewDecision(req)
	if err != nil {
		return nil, err
	}
	if !d.Approved {
		msg := "the review did not approve publishing"
		if d.Comment != "" {
			msg += ": " + d.Comment
		}
		return nil, errors.New(msg)
	}
	var t totalsResult
	if err := wholeOutput(req, "totals", "grand_total", &t); err != nil {
		return nil, err
	}
	var a anomaliesResult
	if err := wholeOutput(req, "anomalies", "threshold", &a); err != nil {
		return nil, err
	}
	title, _ := req.Params["title"].(string)
	if strings.TrimSpace(title) == "" {
		title = "Sales report"
	}
	return render(strings.TrimSpace(title), d, t, a), nil
}

// wholeOutput decodes the input slot named slot, which holds a task's whole
// output, into into; without the slot, the output of the first dependency
// (by id) that has key.
func wholeOutput(req request, slot, key string, into any) error {
	v, ok := req.Inputs[slot]
	if !ok {
		ids := make([]string, 0, len(req.Depends))
		for id := range req.Depends {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if m, isMap := req.Depends[id].(map[string]any); isMap && m[key] != nil {
				v, ok = m, true
				break
			}
		}
	}
	if !ok || v == nil {
		return fmt.Errorf("no %s: wire the %s task's output with inputs.%s (\"%s\": {\"from\": \"%s\"}) or depend on it", slot, slot, slot, slot, slot)
	}
	if err := decodeInto(v, into); err != nil {
		return fmt.Errorf("%s: %w", slot, err)
	}
	return nil
}
