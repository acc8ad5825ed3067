package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// listen opens the server's TCP listener on addr. A port another program
// holds is the usual first-run stumble (a second leadline serve, or
// another server on 8080): the error says how to choose another.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("cannot listen on %s: another program already uses the port (perhaps another leadline serve); "+
			"stop it, or pick another address with --addr (or LEADLINE_ADDR), e.g. --addr 127.0.0.1:8081: %w", addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return ln, nil
}
