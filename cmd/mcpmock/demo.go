package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/examples/weather"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// internalWeatherServer is the hidden command that runs the bundled weather
// server on stdio, so that the demo can record a real child process without
// building anything.
const internalWeatherServer = "__weather-server"

func serveWeather(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return weather.Serve(ctx, io.NopCloser(stdin), nopWriteCloser{stdout})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// demo records a session of the weather example through the stdio tap with
// the go-sdk client, replays the cassette to the mcp-go client, and checks
// that both saw the same results.
func (e *env) demo(ctx context.Context, args []string) error {
	var c common
	var keep string
	fs := newFlagSet("demo", "mcpmock demo [--keep FILE]", e.stdout)
	fs.StringVar(&c.log, "log", "text", `live log format on stderr: "text" or "json"`)
	fs.BoolVar(&c.quiet, "quiet", false, "no live log")
	fs.StringVar(&keep, "keep", "", "write the recorded cassette to FILE instead of a temporary file")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("demo: find the mcpmock binary: %w", err)
	}
	path := keep
	if path == "" {
		dir, err := os.MkdirTemp("", "mcpmock-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "weather.json")
	}

	fmt.Fprintf(e.stdout, "1. Recording: the go-sdk client talks to the weather server through the tap\n   (mcpmock record -c %s -- mcpmock %s)\n", path, internalWeatherServer)
	rec, err := recorder.New(path, &recorder.Options{
		Logger: log,
		Meta:   cassettes.Meta{RecordedBy: "mcpmock " + version + " demo", Transport: "stdio", Server: []string{"mcpmock", internalWeatherServer}},
	})
	if err != nil {
		return err
	}
	recorded, err := withPipes(ctx, weather.ClientOptions{Library: "go-sdk"}, func(ctx context.Context, in io.Reader, out io.Writer) error {
		status, err := recorder.Stdio(ctx, []string{self, internalWeatherServer}, in, out, e.stderr, rec, nil)
		if err == nil && status != 0 {
			err = fmt.Errorf("the weather server exited with status %d", status)
		}
		return err
	})
	if cerr := rec.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("demo: record: %w", err)
	}
	livelog.FlushAll() // the log's lines of this step before its results
	printResults(e.stdout, recorded)
	fmt.Fprintf(e.stdout, "   %s\n\n", rec.Summary())

	cas, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "2. Replaying: the mcp-go client talks to the replay server, no weather server running\n   (mcpmock replay -c %s)\n", path)
	eng, err := replayer.New(cas, &replayer.Options{Logger: log})
	if err != nil {
		return err
	}
	replayed, err := withPipes(ctx, weather.ClientOptions{Library: "mcp-go"}, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return eng.Serve(ctx, in, out)
	})
	if err != nil {
		return fmt.Errorf("demo: replay: %w", err)
	}
	livelog.FlushAll()
	printResults(e.stdout, replayed)
	fmt.Fprintf(e.stdout, "   replayed %s\n\n", eng.Stats())

	if diff := cmp.Diff(recorded, replayed); diff != "" {
		fmt.Fprintf(e.stdout, "3. The two clients saw DIFFERENT results (-recorded +replayed):\n%s", diff)
		return fmt.Errorf("demo: replay differs from the recording")
	}
	fmt.Fprintf(e.stdout, "3. Both clients saw the same %d results.\n", len(recorded))
	if keep != "" {
		fmt.Fprintf(e.stdout, "   The cassette is in %s; try: mcpmock cassette show %s\n", keep, keep)
	}
	return nil
}

// withPipes connects a weather client to a server side that speaks stdio on
// (in, out), runs the client, then closes the client's side and waits for
// the server side to finish.
func withPipes(ctx context.Context, opts weather.ClientOptions, server func(ctx context.Context, in io.Reader, out io.Writer) error) ([]string, error) {
	toServer, clientW := io.Pipe()
	clientR, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := server(ctx, toServer, fromServer)
		fromServer.Close()
		done <- err
	}()
	lines, err := weather.RunClient(ctx, clientR, clientW, opts)
	clientW.Close()
	clientR.Close()
	if serr := <-done; err == nil {
		err = serr
	}
	return lines, err
}

func printResults(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "   %s\n", strings.ReplaceAll(l, "\n", " / "))
	}
}
