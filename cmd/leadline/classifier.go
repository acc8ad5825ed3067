package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/leadline/leadline/inbox"
	"github.com/leadline/leadline/platform"
)

const classifierHelp = `Usage: leadline classifier train|eval [flags]

  train   train a reply classifier from labelled replies (--from FILE.jsonl)
          or from a workspace's hand-set intents (--from-workspace NAME)
  eval    measure a classifier on labelled replies

Run 'leadline classifier COMMAND --help' for a command's flags.
`

func init() {
	commandHelp["classifier train"] = "Usage: leadline classifier train (--from FILE.jsonl ... | --from-workspace NAME) [flags]\n\n" +
		"--from trains on labelled replies (JSON lines: intent, body, optional subject, headers, lang, channel) and writes the model to --out;\n" +
		"build leadline with it as inbox/modeldata/builtin.llcm to ship it.\n" +
		"--from-workspace trains on the intents the workspace's members set by hand (intent_source manual), on top of the built-in model,\n" +
		"and stores it for the workspace; it is used only when it reads a held-out fifth of those replies better than the built-in model."
	commandHelp["classifier eval"] = "Usage: leadline classifier eval --on FILE.jsonl [--model FILE]\n\n" +
		"Reads every reply of the file with the classifier leadline installs (or the model in --model) and prints accuracy by intent,\n" +
		"language and channel and the confusion matrix."
}

func cmdClassifier(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return &helpRequest{text: classifierHelp}
	}
	switch args[0] {
	case "train":
		return cmdClassifierTrain(ctx, args[1:], stdout)
	case "eval":
		return cmdClassifierEval(args[1:], stdout)
	case "help", "-h", "--help":
		return &helpRequest{text: classifierHelp}
	}
	return usageError{fmt.Sprintf("classifier: unknown command %q (train or eval)", args[0])}
}

func readExampleFiles(names []string) ([]inbox.Example, error) {
	var all []inbox.Example
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return nil, err
		}
		exs, err := inbox.ReadExamples(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		all = append(all, exs...)
	}
	return all, nil
}

func cmdClassifierTrain(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dsn := newFlags("classifier train")
	var from multiFlag
	fs.Var(&from, "from", "a file of labelled replies, JSON lines (may be given several times)")
	wsName := fs.String("from-workspace", "", "train on this workspace's hand-set intents and store the model for it")
	out := fs.String("out", "classifier.llcm", "with --from: where to write the model")
	epochs := fs.Int("epochs", 0, "passes over the replies (0: the default)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if (len(from) == 0) == (*wsName == "") {
		return usageError{"classifier train: give --from FILE.jsonl or --from-workspace NAME"}
	}
	if *wsName != "" {
		return trainWorkspace(ctx, *dsn, *wsName, stdout)
	}
	exs, err := readExampleFiles(from)
	if err != nil {
		return err
	}
	if len(exs) == 0 {
		return usageError{"classifier train: the files hold no replies"}
	}
	start := time.Now()
	m := inbox.Train(exs, inbox.TrainOptions{Epochs: *epochs, Seed: 25})
	data, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	train := inbox.Evaluate(exs, func(ex inbox.Example) inbox.Intent {
		return classify(&inbox.ModelClassifier{Model: m, Threshold: inbox.DefaultThreshold}, ex)
	})
	fmt.Fprintf(stdout, "trained on %d replies in %s; %.1f%% of them read right; %d bytes written to %s\n",
		len(exs), time.Since(start).Round(time.Millisecond), 100*train.Accuracy(), len(data), *out)
	return nil
}

func classify(c inbox.Classifier, ex inbox.Example) inbox.Intent {
	r, err := c.Classify(context.Background(), inbox.Incoming{Subject: ex.Subject, Body: ex.Body, Headers: ex.Headers,
		ReceivedAt: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		return inbox.Unclear
	}
	return r.Intent
}

func cmdClassifierEval(args []string, stdout io.Writer) error {
	fs, _ := newFlags("classifier eval")
	var on multiFlag
	fs.Var(&on, "on", "a file of labelled replies, JSON lines (may be given several times)")
	model := fs.String("model", "", "a model file (default: the built-in model)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(on) == 0 {
		return usageError{"classifier eval: give --on FILE.jsonl"}
	}
	exs, err := readExampleFiles(on)
	if err != nil {
		return err
	}
	c := inbox.DefaultClassifier()
	if *model != "" {
		data, err := os.ReadFile(*model)
		if err != nil {
			return err
		}
		m, err := inbox.UnmarshalModel(data)
		if err != nil {
			return err
		}
		c = &inbox.ModelClassifier{Model: m, Threshold: inbox.DefaultThreshold}
	}
	s := inbox.Evaluate(exs, func(ex inbox.Example) inbox.Intent { return classify(c, ex) })
	fmt.Fprint(stdout, s.Table())
	return nil
}

// trainWorkspace trains and stores a workspace's own model.
func trainWorkspace(ctx context.Context, dsn, name string, stdout io.Writer) error {
	d, w, err := openWorkspace(ctx, dsn, name)
	if err != nil {
		return err
	}
	defer d.Close()
	pl := platform.New(platform.Config{DB: d})
	tm, err := pl.Inbox.TrainTeam(ctx, w.ID)
	if err != nil {
		return err
	}
	verdict := "in use: it reads the workspace's replies from now on"
	if !tm.InUse {
		verdict = "stored, not in use: the built-in model reads them as well or better"
	}
	fmt.Fprintf(stdout, "trained on %d hand-set intents of %s; on the %d held out it read %.1f%% right, the built-in model %.1f%%; %s\n",
		tm.Examples, w.Name, tm.HeldOut, 100*tm.Accuracy, 100*tm.BuiltinAccuracy, verdict)
	return nil
}

// classifierOpts are serve's and work's flags for an endpoint classifier.
type classifierOpts struct {
	url, keyEnv, model *string
	timeout            *time.Duration
}

func classifierFlags(fs *flag.FlagSet) classifierOpts {
	return classifierOpts{
		url:     fs.String("classifier-url", envOr("LEADLINE_CLASSIFIER_URL", ""), "read replies with this OpenAI-compatible chat completions endpoint (e.g. a local model), falling back to the built-in model on a timeout or an error"),
		keyEnv:  fs.String("classifier-key-env", "", "the environment variable that holds the endpoint's API key"),
		model:   fs.String("classifier-model", "", "the model name the endpoint expects"),
		timeout: fs.Duration("classifier-timeout", 5*time.Second, "how long one call to the endpoint may take before the built-in model reads the reply"),
	}
}

func (o classifierOpts) check() error {
	if *o.url == "" {
		if *o.keyEnv != "" || *o.model != "" {
			return usageError{"--classifier-key-env and --classifier-model go with --classifier-url"}
		}
		return nil
	}
	if u, err := url.Parse(*o.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Sprintf("--classifier-url %q is not an http(s) URL", *o.url)}
	}
	if *o.keyEnv != "" && os.Getenv(*o.keyEnv) == "" {
		return usageError{fmt.Sprintf("--classifier-key-env: the environment variable %s is empty", *o.keyEnv)}
	}
	if *o.timeout <= 0 {
		return usageError{"--classifier-timeout must be positive"}
	}
	return nil
}

// apply installs the endpoint classifier, when one is given.
func (o classifierOpts) apply(svc *inbox.Service) {
	if *o.url == "" {
		return
	}
	key := ""
	if *o.keyEnv != "" {
		key = os.Getenv(*o.keyEnv)
	}
	svc.UseClassifier(&inbox.Endpoint{URL: *o.url, Key: key, Model: *o.model, Timeout: *o.timeout, Fallback: inbox.DefaultClassifier()})
}
