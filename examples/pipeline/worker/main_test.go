package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decode reads a request as the worker does: numbers as json.Number.
func decode(t *testing.T, src string) request {
	t.Helper()
	var req request
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestParseCSV(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		columns []string
		records []record
		wantErr bool
	}{
		{
			name:    "header is lower-cased, ragged records are kept",
			src:     "Date, Region ,product\n2024-01-02,North,Widget\n2024-01-03,South\n\n2024-01-04,East,Gizmo,extra\n",
			columns: []string{"date", "region", "product"},
			records: []record{
				{Line: 2, Fields: []string{"2024-01-02", "North", "Widget"}},
				{Line: 3, Fields: []string{"2024-01-03", "South"}},
				{Line: 5, Fields: []string{"2024-01-04", "East", "Gizmo", "extra"}},
			},
		},
		{
			name:    "quoted fields",
			src:     "a,b\n\"x, y\",\"z\"\n",
			columns: []string{"a", "b"},
			records: []record{{Line: 2, Fields: []string{"x, y", "z"}}},
		},
		{
			name:    "header only",
			src:     "a,b\n",
			columns: []string{"a", "b"},
			records: []record{},
		},
		{name: "empty", src: "", wantErr: true},
		{name: "broken quote", src: "a,b\n\"x,y\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			columns, records, err := parseCSV(strings.NewReader(tt.src))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !reflect.DeepEqual(columns, tt.columns) || !reflect.DeepEqual(records, tt.records) {
				t.Errorf("got %q %+v\nwant %q %+v", columns, records, tt.columns, tt.records)
			}
		})
	}
}

var salesColumns = []string{"date", "region", "product", "units", "unit_price"}

func rec(line int, fields ...string) record { return record{Line: line, Fields: fields} }

func TestClean(t *testing.T) {
	tests := []struct {
		name     string
		columns  []string
		records  []record
		rows     []row
		problems []problem
		wantErr  bool
	}{
		{
			name:    "good rows are typed, amounts in cents",
			columns: salesColumns,
			records: []record{rec(2, "2024-01-02", "North", "Widget", "12", "9.50"), rec(3, " 2024-01-03 ", "South", "Gizmo", "3", "4.333")},
			rows: []row{
				{Line: 2, Date: "2024-01-02", Region: "North", Product: "Widget", Units: 12, UnitPrice: 9.5, Amount: 114},
				{Line: 3, Date: "2024-01-03", Region: "South", Product: "Gizmo", Units: 3, UnitPrice: 4.333, Amount: 13},
			},
			problems: []problem{},
		},
		{
			name:     "columns in another order",
			columns:  []string{"region", "units", "unit_price", "product", "date"},
			records:  []record{rec(2, "East", "2", "24.00", "Gadget", "2024-01-05")},
			rows:     []row{{Line: 2, Date: "2024-01-05", Region: "East", Product: "Gadget", Units: 2, UnitPrice: 24, Amount: 48}},
			problems: []problem{},
		},
		{
			name:    "malformed records are dropped with a reason",
			columns: salesColumns,
			records: []record{
				rec(2, "2024-01-09", "East", "Widget", "7"),
				rec(3, "2024-01-12", "West", "Gadget", "twelve", "24.00"),
				rec(4, "2024-13-01", "West", "Gadget", "1", "24.00"),
				rec(5, "2024-01-12", "", "Gadget", "1", "24.00"),
				rec(6, "2024-01-12", "West", "Gadget", "0", "24.00"),
				rec(7, "2024-01-12", "West", "Gadget", "1", "-2"),
				rec(8, "2024-01-12", "West", "Gadget", "1", "NaN"),
				rec(9, "2024-01-12", "West", "", "1", "2"),
			},
			rows: []row{},
			problems: []problem{
				{2, "expected 5 fields, found 4"},
				{3, `units "twelve" is not a positive whole number`},
				{4, `date "2024-13-01" is not YYYY-MM-DD`},
				{5, "region is empty"},
				{6, `units "0" is not a positive whole number`},
				{7, `unit_price "-2" is not a positive number`},
				{8, `unit_price "NaN" is not a positive number`},
				{9, "product is empty"},
			},
		},
		{
			name:    "a missing column is an error",
			columns: []string{"date", "region", "product", "units"},
			records: []record{rec(2, "2024-01-02", "North", "Widget", "12")},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := clean(tt.columns, tt.records)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !reflect.DeepEqual(got.Rows, tt.rows) {
				t.Errorf("rows:\ngot  %+v\nwant %+v", got.Rows, tt.rows)
			}
			if !reflect.DeepEqual(got.Problems, tt.problems) {
				t.Errorf("problems:\ngot  %+v\nwant %+v", got.Problems, tt.problems)
			}
			if got.Dropped != len(tt.problems) || len(got.Rows)+got.Dropped != len(tt.records) {
				t.Errorf("dropped = %d with %d rows of %d records", got.Dropped, len(got.Rows), len(tt.records))
			}
		})
	}
}

func sale(region string, units int, amount float64) row {
	return row{Region: region, Units: units, Amount: amount}
}

func TestTotals(t *testing.T) {
	tests := []struct {
		name string
		rows []row
		want totalsResult
	}{
		{
			name: "none",
			want: totalsResult{Regions: map[string]regionTotal{}},
		},
		{
			name: "per region, in cents",
			rows: []row{sale("North", 1, 0.1), sale("South", 2, 10), sale("North", 3, 0.2), sale("North", 1, 100.005)},
			want: totalsResult{
				Regions: map[string]regionTotal{
					"North": {Rows: 3, Units: 5, Amount: 100.31},
					"South": {Rows: 1, Units: 2, Amount: 10},
				},
				Rows: 4, Units: 7, GrandTotal: 110.31,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := totals(tt.rows); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{10, 10, 1000, 10}, 10},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}

func TestAnomalies(t *testing.T) {
	amounts := func(as []anomaly) []float64 {
		out := []float64{}
		for _, a := range as {
			out = append(out, a.Amount)
		}
		return out
	}
	rows := []row{sale("N", 1, 100), sale("S", 1, 120), sale("E", 1, 90), sale("W", 1, 3600), sale("N", 1, 110), sale("S", 1, 300), sale("E", 1, 130)}
	tests := []struct {
		name      string
		rows      []row
		factor    float64
		median    float64
		threshold float64
		amounts   []float64
		wantErr   bool
	}{
		{name: "over 3x the median", rows: rows, factor: 3, median: 120, threshold: 360, amounts: []float64{3600}},
		{name: "over 2x the median, in row order", rows: rows, factor: 2, median: 120, threshold: 240, amounts: []float64{3600, 300}},
		{name: "even count", rows: rows[:6], factor: 1.5, median: 115, threshold: 172.5, amounts: []float64{3600, 300}},
		{name: "the threshold itself is not over", rows: []row{sale("N", 1, 10), sale("N", 1, 10), sale("N", 1, 30)}, factor: 3, median: 10, threshold: 30, amounts: []float64{}},
		{name: "no rows", factor: 3, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := anomalies(tt.rows, tt.factor)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.Factor != tt.factor || got.Median != tt.median || got.Threshold != tt.threshold {
				t.Errorf("factor, median, threshold = %v, %v, %v; want %v, %v, %v", got.Factor, got.Median, got.Threshold, tt.factor, tt.median, tt.threshold)
			}
			if a := amounts(got.Anomalies); !reflect.DeepEqual(a, tt.amounts) {
				t.Errorf("anomalies %v, want %v", a, tt.amounts)
			}
		})
	}
}

// TestSalesCSV runs extract's parser, clean, totals and anomalies over the
// example's data file: 30 records, 2 malformed, 4 regions, 1 outlier.
func TestSalesCSV(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "data", "sales.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	columns, records, err := parseCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clean(columns, records)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 30 || len(c.Rows) != 28 || c.Dropped != 2 {
		t.Errorf("%d records, %d rows, %d dropped; want 30, 28, 2", len(records), len(c.Rows), c.Dropped)
	}
	tot := totals(c.Rows)
	if len(tot.Regions) != 4 || tot.Rows != 28 {
		t.Errorf("totals over %d regions and %d rows; want 4 and 28", len(tot.Regions), tot.Rows)
	}
	a, err := anomalies(c.Rows, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Anomalies) != 1 || a.Anomalies[0].Region != "North" || a.Anomalies[0].Units != 150 {
		t.Errorf("anomalies = %+v; want the one North order of 150 units", a.Anomalies)
	}
}

func TestResolvePath(t *testing.T) {
	base := t.TempDir()
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	csvFile := filepath.Join(base, "data", "sales.csv")
	if err := os.WriteFile(csvFile, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		dirs []string
		want string
		ok   bool
	}{
		{"data/sales.csv", []string{base}, csvFile, true},
		{"data/sales.csv", []string{other, base}, csvFile, true},
		{"data/SALES.CSV", []string{other}, "", false},
		{"data/sales.csv", []string{other}, "", false},
		{"", []string{base}, "", false},
		{"../data/sales.csv", []string{filepath.Join(base, "worker")}, "", false},
		{csvFile, []string{base}, "", false},
		{"data", []string{base}, "", false},
		{"data/notes.txt", []string{base}, "", false},
	}
	for _, tt := range tests {
		got, err := resolvePath(tt.path, tt.dirs)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("resolvePath(%q, %q) = %q, %v; want %q, ok=%v", tt.path, tt.dirs, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseDecision(t *testing.T) {
	tests := []struct {
		json string
		want decision
		ok   bool
	}{
		{`"approve"`, decision{Approved: true}, true},
		{`" Approved "`, decision{Approved: true}, true},
		{`"reject"`, decision{}, true},
		{`{"approved": true, "comment": " fine "}`, decision{Approved: true, Comment: "fine"}, true},
		{`{"approved": false, "comment": "no"}`, decision{Comment: "no"}, true},
		{`{"comment": "no verdict"}`, decision{}, false},
		{`{"rows": []}`, decision{}, false},
		{`"maybe"`, decision{}, false},
		{`42`, decision{}, false},
	}
	for _, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.json), &v); err != nil {
			t.Fatal(err)
		}
		got, ok := parseDecision(v)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseDecision(%s) = %+v, %v; want %+v, %v", tt.json, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMoney(t *testing.T) {
	tests := map[float64]string{0: "0.00", 5.5: "5.50", 999.999: "1,000.00", 1234.5: "1,234.50", 6824.5: "6,824.50", 1234567.891: "1,234,567.89", -1234.5: "-1,234.50"}
	for x, want := range tests {
		if got := money(x); got != want {
			t.Errorf("money(%v) = %q, want %q", x, got, want)
		}
	}
}

func TestPublish(t *testing.T) {
	const data = `"totals": {"regions": {"West": {"rows": 1, "units": 2, "amount": 48}, "East": {"rows": 2, "units": 5, "amount": 3610.5}}, "rows": 3, "units": 7, "grand_total": 3658.5},
		"anomalies": {"factor": 3, "median": 48, "threshold": 144, "anomalies": [{"line": 7, "date": "2024-01-17", "region": "East", "product": "Gadget", "units": 150, "unit_price": 24, "amount": 3600, "ratio": 75}]}`
	tests := []struct {
		name    string
		request string
		has     []string
		wantErr string
	}{
		{
			name:    "approved with a comment, data wired by inputs",
			request: `{"params": {"title": "January"}, "depends": {"review": {"approved": true, "comment": "Bulk order, fine."}}, "inputs": {` + data + `}}`,
			has: []string{"# January\n", "3 sales, 7 units, 3,658.50 in total, across 2 regions.",
				"| East | 2 | 5 | 3,610.50 |\n| West | 1 | 2 | 48.00 |\n| **total** | 3 | 7 | 3,658.50 |",
				"over 3× the median amount (48.00), that is over 144.00",
				"| 7 | 2024-01-17 | East | Gadget | 150 | 24.00 | 3,600.00 | 75 |",
				"Reviewer's comment: Bulk order, fine."},
		},
		{
			name:    "approved by the word, data from depends",
			request: `{"depends": {"review": "approve", ` + data + `}}`,
			has:     []string{"# Sales report\n", "## Totals by region", "## Anomalies", "Approved for publication.\n"},
		},
		{
			name:    "no anomalies",
			request: `{"depends": {"review": "approve"}, "inputs": {"totals": {"regions": {"N": {"rows": 1, "units": 1, "amount": 1}}, "rows": 1, "units": 1, "grand_total": 1}, "anomalies": {"factor": 3, "median": 1, "threshold": 3, "anomalies": []}}}`,
			has:     []string{"None: no sale is over 3× the median amount (1.00)."},
		},
		{
			name:    "rejected",
			request: `{"depends": {"review": {"approved": false, "comment": "explain the outlier"}}, "inputs": {` + data + `}}`,
			wantErr: "the review did not approve publishing: explain the outlier",
		},
		{
			name:    "no review",
			request: `{"depends": {}, "inputs": {` + data + `}}`,
			wantErr: "no review decision",
		},
		{
			name:    "no totals",
			request: `{"depends": {"review": "approve"}}`,
			wantErr: "no totals",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runPublish(decode(t, tt.request))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			md, _ := out.(string)
			for _, s := range tt.has {
				if !strings.Contains(md, s) {
					t.Errorf("report lacks %q:\n%s", s, md)
				}
			}
		})
	}
}

func TestWorkersReadInputsOrDepends(t *testing.T) {
	const rows = `[{"line": 2, "date": "2024-01-02", "region": "North", "product": "W", "units": 2, "unit_price": 1.5, "amount": 3}]`
	for _, src := range []string{`{"inputs": {"rows": ` + rows + `}}`, `{"depends": {"clean": {"rows": ` + rows + `, "dropped": 0}}}`} {
		out, err := runTotals(decode(t, src))
		if err != nil {
			t.Fatal(err)
		}
		if got := out.(totalsResult); got.GrandTotal != 3 || got.Regions["North"].Units != 2 {
			t.Errorf("%s: totals = %+v", src, got)
		}
	}
	if _, err := runTotals(decode(t, `{"depends": {}}`)); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("runTotals without rows: err = %v", err)
	}
	if _, err := runAnomalies(decode(t, `{"params": {"factor": "three"}, "inputs": {"rows": `+rows+`}}`)); err == nil {
		t.Error("runAnomalies with factor \"three\": want an error")
	}
	if _, err := runAnomalies(decode(t, `{"params": {"factor": -1}, "inputs": {"rows": `+rows+`}}`)); err == nil {
		t.Error("runAnomalies with factor -1: want an error")
	}
}
