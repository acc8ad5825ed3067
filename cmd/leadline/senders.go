package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/platform"
	"github.com/leadline/leadline/senders"
	"github.com/leadline/leadline/transports/email"
)

func cmdSenders(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "check":
		return cmdSendersCheck(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "connect":
		return cmdSendersConnect(ctx, args[1:], stdout, stderr)
	case len(args) > 1 && args[0] == "secret" && (args[1] == "set" || args[1] == "delete"):
		return cmdSendersSecret(ctx, args[1], args[2:], stdout, stderr)
	}
	return usageError{"senders: the commands are 'senders check', 'senders connect', 'senders secret set' and 'senders secret delete'"}
}

// stdin is where `senders secret set` reads the secret (a test sets it).
var stdin io.Reader = os.Stdin

// cmdSendersSecret stores a sender's secret sealed under the server's
// secret key (set, the value read from standard input so that it is in
// no shell history or process list), or forgets it (delete): the console's
// sender form does the same. The transports read a stored secret before
// the environment variable of the same name.
func cmdSendersSecret(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("senders secret " + verb)
	wsName := fs.String("workspace", "", "workspace name (required)")
	sender := fs.String("sender", "", "sender name (required)")
	name := fs.String("name", "", "the secret's name, as the sender's settings give it: password_env, token_env, api_key_env or webhook_secret_env (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *wsName == "" || *sender == "" || *name == "" {
		return usageError{"senders secret " + verb + ": --workspace, --sender and --name are required"}
	}
	pl, s, done, err := openSender(ctx, *dsn, *wsName, *sender, stderr)
	if err != nil {
		return err
	}
	defer done()
	if verb == "delete" {
		if err := pl.SenderSecrets.Delete(ctx, s, *name); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sender %s: stored secret %s deleted; the environment variable %s is read again\n", s.Name, *name, *name)
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(stdin, 64<<10))
	if err != nil {
		return err
	}
	if err := pl.SenderSecrets.Set(ctx, s, *name, strings.TrimRight(string(raw), "\r\n")); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sender %s: secret %s stored sealed (key %s); it is read before the environment variable %s\n", s.Name, *name, pl.SecretKey.ID(), *name)
	return nil
}

// errCheckFailed is a check that found something to fix: exit code 1.
var errCheckFailed = errors.New("senders check: something does not work; each ✗ line says what to fix")

// cmdSendersCheck connects each sender of a workspace and says what works.
func cmdSendersCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("senders check")
	wsName := fs.String("workspace", "", "workspace name (required)")
	only := fs.String("sender", "", "check this sender only (by name)")
	sendTo := fs.String("send-test", "", "also send one real test message to this address (email senders)")
	dnsAddr := fs.String("dns", envOr("LEADLINE_DNS", ""), "ask this DNS server (host:port) for the email senders' domain check (default $LEADLINE_DNS, else the system's resolver)")
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
	key, err := secretKey(ctx, d, *dsn, logger)
	if err != nil {
		return err
	}
	pl := platform.New(platform.Config{DB: d, Logger: logger, SecretKey: key})
	ts := pl.Transports(platform.Outside{Seed: 1})
	dcfg := email.DomainConfig{Clock: pl.Clock}
	if *dnsAddr != "" {
		dcfg.Resolver = email.ResolverAt(*dnsAddr)
	}
	dc := email.NewDomainChecker(dcfg)
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
		chk := pl.CheckSender(ctx, ts, s)
		if chk.NoConnection {
			fmt.Fprintf(stdout, "  ✓ the %s transport needs no connection\n", s.Transport)
			continue
		}
		for _, st := range chk.Steps {
			mark := "✓"
			if !st.OK {
				mark = "✗"
			}
			fmt.Fprintf(stdout, "  %s %s", mark, st.What)
			if st.Detail != "" {
				fmt.Fprintf(stdout, ": %s", st.Detail)
			}
			fmt.Fprintln(stdout)
		}
		failed = failed || !chk.OK
		if rep, ok := dc.Check(ctx, s); ok {
			failed = printDomain(ctx, stdout, pl.Senders, s, rep) || failed
		}
		if *sendTo == "" || !chk.OK || s.Channel != senders.Email {
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

// printDomain prints the domain check of email sender s, records a
// failure as its health warning (or clears one the domain no longer
// earns), and reports whether a part failed.
func printDomain(ctx context.Context, stdout io.Writer, h email.HealthSignaler, s *senders.Sender, rep *email.DomainReport) bool {
	fmt.Fprintf(stdout, "  domain %s (MX, SPF, DKIM, DMARC):\n", rep.Domain)
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "  %s %s: %s", r.Mark(), r.Check, r.Detail)
		if r.Remedy != "" {
			fmt.Fprintf(stdout, ". %s", r.Remedy)
		}
		fmt.Fprintln(stdout)
	}
	if err := email.RecordDomain(ctx, h, s, rep); err != nil {
		fmt.Fprintf(stdout, "  ✗ recording the sender's health: %v\n", err)
		return true
	}
	if rep.Failed() {
		fmt.Fprintf(stdout, "  ! health: warning %s until the domain passes (the sender still sends, at half its caps)\n", senders.SignalDomainCheckFailed)
	}
	return rep.Failed()
}

// openSender opens the database at dsn with the server's key and returns
// the platform on it and the sender named sender of workspace wsName;
// done closes the database.
func openSender(ctx context.Context, dsn, wsName, sender string, stderr io.Writer) (*platform.Platform, *senders.Sender, func(), error) {
	d, w, err := openWorkspace(ctx, dsn, wsName)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := secretKey(ctx, d, dsn, cliLogger(stderr))
	if err != nil {
		d.Close()
		return nil, nil, nil, err
	}
	pl := platform.New(platform.Config{DB: d, Logger: cliLogger(stderr), SecretKey: key})
	s, err := pl.Senders.ByName(ctx, w.ID, sender)
	if err != nil {
		d.Close()
		return nil, nil, nil, apikit.NotFound(fmt.Sprintf("Sender %q in workspace %s", sender, w.Name))
	}
	return pl, s, func() { d.Close() }, nil
}
