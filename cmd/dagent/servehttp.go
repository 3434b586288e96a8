package main

import (
	"context"
	"net"
	"net/http"
	"time"
)

// serveTimeouts are the timeouts of dagent serve's connections: a client
// has header to send a request's header and read to send all of it, body
// included — an upload to the plan checker, of a few MiB at most; a
// response is written within write; a connection with no request under
// way is closed after idle. A live page's stream lasts as long as the
// page: package web gives each of its writes a deadline of its own, and
// lifts the read timeout of a request that reads nothing more.
var serveTimeouts = struct{ header, read, write, idle time.Duration }{
	header: 10 * time.Second, read: time.Minute, write: time.Minute, idle: 2 * time.Minute,
}

// httpServer is the server of dagent serve: h, on connections whose
// requests' contexts are children of ctx, with serveTimeouts.
func httpServer(ctx context.Context, h http.Handler) *http.Server {
	t := serveTimeouts
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.header,
		ReadTimeout:       t.read,
		WriteTimeout:      t.write,
		IdleTimeout:       t.idle,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}
