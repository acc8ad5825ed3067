package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

const healthcheckHelp = "Usage: leadline healthcheck [--url URL]\n\nExits 0 when the server's /healthz answers 200 within 5 seconds, 1 otherwise:\n" +
	"the container's health check, for images that have no curl."

// cmdHealthcheck asks a running server's /healthz.
func cmdHealthcheck(ctx context.Context, args []string, stdout io.Writer) error {
	flags, _ := newFlags("healthcheck")
	url := flags.String("url", "http://127.0.0.1:8080/healthz", "the health check's URL")
	if err := parse(flags, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return usageError{"healthcheck: " + err.Error()}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d: %s", *url, res.StatusCode, body)
	}
	fmt.Fprintf(stdout, "%s\n", body)
	return nil
}
