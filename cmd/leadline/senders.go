package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
)

func cmdSenders(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		return usageError{"senders: the command is 'senders check'"}
	}
	return cmdSendersCheck(ctx, args[1:], stdout, stderr)
}

// errCheckFailed is a check that found something to fix: exit code 1.
var errCheckFailed = errors.New("senders check: something does not work; each ✗ line says what to fix")

// cmdSendersCheck connects each sender of a workspace and says what works.
func cmdSendersCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("senders check")
	wsName := fs.String("workspace", "", "workspace name (required)")
	only := fs.String("sender", "", "check this sender only (by name)")
	sendTo := fs.String("send-test", "", "also send one real test message to this address (email senders)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *wsName == "" {
		return usageError{"senders check: --workspace is required"}
	}
	if *sendTo != "" {
		if _, err := mail.ParseAddress(*sendTo); err != nil {
			return usageError{fmt.Sprintf("senders check: --send-test %q is not an email address", *sendTo)}
		}
	}
	d, w, err := openWorkspace(ctx, *dsn, *wsName)
	if err != nil {
		return err
	}
	defer d.Close()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pl := platform.New(platform.Config{DB: d, Logger: logger})
	ts := pl.Transports(platform.Outside{Seed: 1})
	var list []senders.Sender
	if *only != "" {
		s, err := pl.Senders.ByName(ctx, w.ID, *only)
		if err != nil {
			return apikit.NotFound(fmt.Sprintf("Sender %q in workspace %s", *only, w.Name))
		}
		list = []senders.Sender{*s}
	} else if list, err = pl.Senders.All(ctx, w.ID); err != nil {
		return err
	}
	failed := false
	for i := range list {
		s := &list[i]
		fmt.Fprintf(stdout, "%s (%s, transport %s)\n", s.Name, s.Channel, s.Transport)
		c, ok := ts[s.Transport].(senders.Checker)
		if !ok {
			fmt.Fprintf(stdout, "  ✓ the %s transport needs no connection\n", s.Transport)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		steps := c.Check(cctx, s)
		cancel()
		ok = true
		for _, st := range steps {
			mark := "✓"
			if !st.OK {
				mark, ok, failed = "✗", false, true
			}
			fmt.Fprintf(stdout, "  %s %s", mark, st.What)
			if st.Detail != "" {
				fmt.Fprintf(stdout, ": %s", st.Detail)
			}
			fmt.Fprintln(stdout)
		}
		if *sendTo == "" || !ok || s.Channel != senders.Email {
			continue
		}
		key := "check:" + s.ID + ":" + time.Now().UTC().Format(time.RFC3339Nano)
		res, err := ts[s.Transport].Perform(ctx, senders.Request{Key: key, Sender: s, Action: senders.SendEmail,
			Lead: senders.Recipient{Email: *sendTo}, Subject: "leadline test message from " + s.Name,
			Body: "This message was sent by `leadline senders check --send-test` to test the sender " + s.Name + ".", Purpose: senders.PurposeReply})
		if err != nil {
			failed = true
			msg := err.Error()
			if te, ok := senders.AsTransportError(err); ok {
				msg = te.Message
			}
			fmt.Fprintf(stdout, "  ✗ test message to %s: %s\n", *sendTo, msg)
			continue
		}
		fmt.Fprintf(stdout, "  ✓ test message to %s sent (Message-ID <%s>)\n", *sendTo, res.ProviderMessageID)
	}
	if failed {
		return errCheckFailed
	}
	return nil
}
