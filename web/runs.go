package web

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/prose"
)

// pageSize is how many runs a page of the runs page lists.
const pageSize = 50

// runsQuery is what the runs page shows: the runs of some statuses (all,
// for none), a page of them.
type runsQuery struct {
	statuses []durable.Status
	page     int // from 1
}

// parseRunsQuery reads ?status=S (repeatable) and ?page=N.
func parseRunsQuery(q url.Values) (runsQuery, error) {
	rq := runsQuery{page: 1}
	for _, name := range q["status"] {
		st, err := durable.ParseStatus(name)
		if err != nil {
			return rq, err
		}
		rq.statuses = append(rq.statuses, st)
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return rq, fmt.Errorf("page %q: want a page number from 1", p)
		}
		rq.page = n
	}
	return rq, nil
}

// values is rq as a query, at page.
func (rq runsQuery) values(page int) url.Values {
	q := url.Values{}
	for _, st := range rq.statuses {
		q.Add("status", string(st))
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	return q
}

// runsView is the runs page, and what its live stream sends.
type runsView struct {
	Rows  []runRow `json:"rows"`
	Total int      `json:"total"`
	Page  int      `json:"page"`
	Pages int      `json:"pages"`
	// Prev and Next are the addresses of the pages around this one;
	// empty at the ends.
	Prev string `json:"prev"`
	Next string `json:"next"`

	Filters []filter `json:"-"`
	// Live is the address of the page's live stream.
	Live string `json:"-"`
}

// runRow is a run of the runs page.
type runRow struct {
	ID      string `json:"id"`
	Href    string `json:"href"`
	Started string `json:"started"`
	Status  string `json:"status"`
	Tasks   string `json:"tasks"`
	What    string `json:"what"`
}

// filter is a status the runs page may be filtered by.
type filter struct {
	Status durable.Status
	On     bool
}

func (s *Server) runsView(r *http.Request, rq runsQuery) (*runsView, error) {
	page, err := durable.List(r.Context(), s.o.Store, durable.Query{Statuses: rq.statuses, Limit: pageSize, Offset: (rq.page - 1) * pageSize})
	if err != nil {
		return nil, err
	}
	v := &runsView{Rows: make([]runRow, 0, len(page.Runs)), Total: page.Total, Page: rq.page, Pages: max((page.Total+pageSize-1)/pageSize, 1)}
	for _, st := range durable.ShownStatuses() {
		v.Filters = append(v.Filters, filter{st, slices.Contains(rq.statuses, st)})
	}
	for _, sum := range page.Runs {
		tasks := "?"
		if sum.Total > 0 {
			tasks = strconv.Itoa(sum.Total)
		}
		v.Rows = append(v.Rows, runRow{
			ID: prose.Visible(sum.ID), Href: runHref(sum.ID), Started: stamp(sum.Created), Status: string(sum.Status),
			Tasks: strconv.Itoa(sum.Done) + "/" + tasks, What: cmp.Or(prose.Excerpt(prose.Visible(sum.Mission), 80), "plan "+sum.PlanHash),
		})
	}
	if rq.page > 1 {
		v.Prev = "/runs?" + rq.values(rq.page-1).Encode()
	}
	if rq.page < v.Pages {
		v.Next = "/runs?" + rq.values(rq.page+1).Encode()
	}
	v.Live = "/live?" + rq.values(rq.page).Encode()
	return v, nil
}

// runHref is the address of run id's page.
func runHref(id string) string { return "/runs/" + segment(id) }

// segment is id as a segment of a path: escaped, and its dots too when it
// is all dots — a browser takes /runs/.. for / and /runs/. for /runs/.
func segment(id string) string {
	if strings.Trim(id, ".") == "" {
		return strings.Repeat("%2E", len(id))
	}
	return url.PathEscape(id)
}

// stamp is how the pages show a time: to the second, with its zone.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	rq, err := parseRunsQuery(r.URL.Query())
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	v, err := s.runsView(r, rq)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	s.render(w, r, "runs", "Runs", v)
}

// runsLive streams the runs page as it changes: its rows, each time one
// of them, or how many there are, changes.
func (s *Server) runsLive(w http.ResponseWriter, r *http.Request) {
	rq, err := parseRunsQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	st := s.stream(w, r)
	if st == nil {
		return
	}
	defer st.close()
	var last []byte
	for st.wait(s.o.Poll) {
		v, err := s.runsView(r, rq)
		if err != nil {
			st.send("failure", failureDoc(err))
			continue
		}
		b, err := jsonv.Marshal(v)
		if err != nil || string(b) == string(last) {
			continue
		}
		last = b
		if !st.sendRaw("runs", b) {
			return
		}
	}
}
