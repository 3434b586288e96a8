package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/web"
)

// TestServeTimeouts: with its timeouts made short, dagent serve's server
// closes an idle connection and one whose body trickles in, while a live
// page's stream goes on.
func TestServeTimeouts(t *testing.T) {
	saved := serveTimeouts
	t.Cleanup(func() { serveTimeouts = saved })
	const d = 300 * time.Millisecond
	serveTimeouts.header, serveTimeouts.read, serveTimeouts.write, serveTimeouts.idle = d, d, d, d

	s, err := openStore(filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h, err := web.New(web.Options{Store: s, Addr: ln.Addr().String(), Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	srv := httpServer(context.Background(), h)
	go srv.Serve(ln)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	addr := ln.Addr().String()
	// closedWithin reads conn until the server closes it, within limit.
	closedWithin := func(conn net.Conn, limit time.Duration) bool {
		conn.SetReadDeadline(time.Now().Add(limit))
		_, err := io.Copy(io.Discard, conn)
		return err == nil // EOF: closed by the server, not timed out here
	}

	t.Run("idle", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET /runs HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, closedWithin(conn, 5*time.Second), "an idle connection is closed")
	})
	t.Run("a body that trickles in", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "POST /check HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000\r\n\r\nplan=")
		require.NoError(t, err)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := io.WriteString(conn, "x"); err != nil {
					return
				}
			}
		}()
		assert.True(t, closedWithin(conn, 5*time.Second), "the connection is closed once the read timeout is past")
	})
	t.Run("a live page", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/live")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		r := bufio.NewReader(resp.Body)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "event: runs\n", line)
		time.Sleep(3 * d)
		require.NoError(t, s.CreateRun(context.Background(), store.Run{ID: "later", Plan: []byte(`{"tasks": [{"id": "a"}]}`)}))
		for {
			line, err := r.ReadString('\n')
			require.NoError(t, err, "the stream goes on past the timeouts")
			if strings.Contains(line, `"id":"later"`) {
				break
			}
		}
	})
}
