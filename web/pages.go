package web

import (
	"bytes"
	"html/template"
	"net/http"

	"github.com/dagent-dev/dagent/internal/prose"
)

// page is what the layout of every page is given: its title, and the
// view its body is drawn from.
type page struct {
	Title string
	V     any
}

// pageNames are the pages, each a template of assets/templates drawn in
// its layout.
var pageNames = []string{"runs", "run", "task", "check", "error"}

func parsePages() (map[string]*template.Template, error) {
	pages := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.ParseFS(assets, "assets/templates/layout.html", "assets/templates/graph.html", "assets/templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes the page name of view v, or, when drawing it fails, an
// error; nothing is written before the page is drawn whole.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name, title string, v any) {
	s.renderStatus(w, r, http.StatusOK, name, title, v)
}

func (s *Server) renderStatus(w http.ResponseWriter, r *http.Request, code int, name, title string, v any) {
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, "layout", page{Title: title, V: v}); err != nil {
		http.Error(w, "dagent serve: the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		w.Write(b.Bytes())
	}
}

// fail writes the error page of err with status code.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	s.renderStatus(w, r, code, "error", http.StatusText(code), prose.Visible(err.Error()))
}
