package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leadline/leadline/apikit"
	"github.com/leadline/leadline/console"
	"github.com/leadline/leadline/oauth"
	"github.com/leadline/leadline/platform"
)

const oauthSetHelp = "Usage: leadline oauth set --workspace NAME --provider google|microsoft --client-id ID (--secret-env VAR | --secret-stdin) [flags]\n\n" +
	"Registers the workspace's OAuth app with Google or Microsoft (or changes it), as the console's Settings › Mail providers does:\n" +
	"with it a mailbox's account is connected (leadline senders connect, or the sender's page). The client secret is named as an\n" +
	"environment variable of the server and workers, or read from standard input and stored sealed. Register the printed redirect URI\n" +
	"with the provider."

const sendersConnectHelp = "Usage: leadline senders connect --workspace NAME --sender NAME --provider google|microsoft [flags]\n\n" +
	"Connects a mailbox's Google or Microsoft account: prints a link to open in a browser, where the account's owner signs in and allows\n" +
	"leadline to read and send its mail; the provider sends the browser back to the server's public URL (" + console.DefaultPrefix + console.CallbackPath + ",\n" +
	"served by leadline serve), and this command, which watches the connect's state in the database, finishes then. The link lasts 15 minutes."

func init() {
	commandHelp["oauth set"] = oauthSetHelp
	commandHelp["senders connect"] = sendersConnectHelp
}

func cmdOAuth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "set" {
		return cmdOAuthSet(ctx, args[1:], stdout, stderr)
	}
	return usageError{"oauth: the command is 'oauth set'"}
}

// cmdOAuthSet registers a workspace's OAuth app.
func cmdOAuthSet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("oauth set")
	wsName := fs.String("workspace", "", "workspace name (required)")
	provider := fs.String("provider", "", "google or microsoft (required)")
	clientID := fs.String("client-id", "", "the app's client id (required)")
	secretEnv := fs.String("secret-env", "", "the environment variable that holds the client secret on the server and workers")
	secretStdin := fs.Bool("secret-stdin", false, "read the client secret from standard input and store it sealed")
	authURL := fs.String("auth-url", "", "the authorization endpoint, when not the provider's documented one (a single-tenant Microsoft app)")
	tokenURL := fs.String("token-url", "", "the token endpoint, when not the provider's documented one")
	publicURL := publicURLFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *wsName == "" || *provider == "" || *clientID == "" {
		return usageError{"oauth set: --workspace, --provider and --client-id are required"}
	}
	in := oauth.AppInput{Provider: *provider, ClientID: *clientID, SecretEnv: *secretEnv, AuthURL: *authURL, TokenURL: *tokenURL}
	if *secretStdin {
		raw, err := io.ReadAll(io.LimitReader(stdin, 64<<10))
		if err != nil {
			return err
		}
		if in.Secret = strings.TrimRight(string(raw), "\r\n"); in.Secret == "" {
			return usageError{"oauth set: --secret-stdin read no secret"}
		}
	}
	d, w, err := openWorkspace(ctx, *dsn, *wsName)
	if err != nil {
		return err
	}
	defer d.Close()
	key, err := secretKey(ctx, d, *dsn, cliLogger(stderr))
	if err != nil {
		return err
	}
	pl := platform.New(platform.Config{DB: d, Logger: cliLogger(stderr), SecretKey: key})
	a, err := pl.OAuth.SetApp(ctx, w.ID, in)
	if err != nil {
		return err
	}
	where := "in " + apikit.Deref(a.SecretEnv)
	if a.SecretStored() {
		where = "stored sealed (key " + key.ID() + ")"
	}
	fmt.Fprintf(stdout, "workspace %s: %s app %s saved; client secret %s\n", w.Name, oauth.Providers[a.Provider].Label, a.ClientID, where)
	if *publicURL != "" {
		fmt.Fprintf(stdout, "register this redirect URI with %s: %s\n", oauth.Providers[a.Provider].Label, console.CallbackURL(*publicURL))
	} else {
		fmt.Fprintf(stdout, "register <public URL>%s%s as the app's redirect URI\n", console.DefaultPrefix, console.CallbackPath)
	}
	return nil
}

// connectPoll is how often `senders connect` looks at the connect's state.
var connectPoll = 2 * time.Second

// cmdSendersConnect connects a mailbox's account: it prints the link and
// waits for the callback (served by leadline serve) to finish the connect.
func cmdSendersConnect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dsn := newFlags("senders connect")
	wsName := fs.String("workspace", "", "workspace name (required)")
	sender := fs.String("sender", "", "sender name (required)")
	provider := fs.String("provider", "", "google or microsoft (required)")
	publicURL := publicURLFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *wsName == "" || *sender == "" || *provider == "" {
		return usageError{"senders connect: --workspace, --sender and --provider are required"}
	}
	if *publicURL == "" {
		return usageError{"senders connect: --public-url (or LEADLINE_PUBLIC_URL) is required: the provider sends the browser back to the server there"}
	}
	pl, s, done, err := openSender(ctx, *dsn, *wsName, *sender, stderr)
	if err != nil {
		return err
	}
	defer done()
	link, state, err := pl.OAuth.Begin(ctx, s, *provider, oauth.BoundCLI, console.CallbackURL(*publicURL))
	if err != nil {
		return err
	}
	label := oauth.Providers[*provider].Label
	fmt.Fprintf(stdout, "Open this link in a browser and sign in as %s's %s account:\n%s\n", s.Name, label, link)
	tick := time.NewTicker(connectPoll)
	defer tick.Stop()
	for {
		done, err := pl.OAuth.Status(ctx, state)
		if err != nil {
			return fmt.Errorf("senders connect: %w", err)
		}
		if done {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	if _, err := pl.AccountConnected(ctx, s.ID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sender %s: %s account connected; leadline keeps its refresh token sealed and renews its access tokens\n", s.Name, label)
	return nil
}
