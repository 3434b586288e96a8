package web

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store/sqlite"
)

// Close waits for a decision being accepted: one that found the server
// open, and has not yet started its resume, which Close must wait for.
func TestCloseWaitsForADecisionBeingAccepted(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "dagent.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	s, err := New(Options{Store: st, Addr: "127.0.0.1:0"})
	require.NoError(t, err)

	// decide, between its check that the server is open and the count of
	// its resume.
	s.mu.Lock()
	require.NoError(t, s.ctx.Err())
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a decision was being accepted")
	case <-time.After(100 * time.Millisecond):
	}
	s.resumes.Add(1)
	s.mu.Unlock()
	select {
	case <-closed:
		t.Fatal("Close returned before the resume it was accepted for ended")
	case <-time.After(100 * time.Millisecond):
	}
	s.resumes.Done()
	<-closed
}
