package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/cassettefile"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/view"
)

// view serves the web view of cassettes on a loopback listener, or writes
// it as one HTML file with --html.
func (e *env) view(ctx context.Context, args []string) error {
	fs := newFlagSet("view", "mcpmock view [--listen ADDR] [--open] [--report FILE] CASSETTE...\n  mcpmock view --html FILE [--report FILE] CASSETTE...", e.stdout)
	listenAddr := fs.String("listen", "127.0.0.1:0", "serve the page on `ADDR` (loopback unless --allow-remote; port 0 takes a free port)")
	open := fs.Bool("open", false, "open the page in the browser")
	html := fs.String("html", "", "write the page with the cassettes in it to `FILE` (one self-contained file: no network) instead of serving it")
	reportPath := fs.String("report", "", "annotate the cassettes with the report `FILE` of a past replay (replay or run --report): its misses with their explanations, the interactions no client used; without CASSETTE, the cassettes the report names")
	allowRemote := fs.Bool("allow-remote", false, "allow --listen on a non-loopback address and accept any Host header")
	var origins []string
	fs.StringArrayVar(&origins, "allow-origin", nil, "also accept requests from browser `ORIGIN` (repeatable); loopback origins are always accepted")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	docs, err := viewDocs(fs.Args(), *reportPath)
	if err != nil {
		return err
	}
	if *html != "" {
		if err := cassettefile.WriteAtomic(*html, false, func(w io.Writer) error { return view.WriteHTML(w, docs) }); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "mcpmock: wrote the view of %d cassettes to %s\n", len(docs), *html)
		return nil
	}
	l, err := listen(ctx, e, *listenAddr, *allowRemote)
	if err != nil {
		return err
	}
	guard := &httpguard.Options{AllowedOrigins: origins, AllowNonLoopbackHost: *allowRemote}
	srv := httpguard.Server(view.Handler(docs), guard, nil)
	url := httpguard.URL(l, "/")
	fmt.Fprintf(e.stderr, "%s (the view of %d cassettes)\n", httpguard.URLLine(l, "/"), len(docs))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	if *open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(e.stderr, "mcpmock: --open: %v; open %s yourself\n", err, url)
		}
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	case <-e.signals: // SIGINT or SIGTERM: stop serving, exit 0
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// viewDocs builds the models of the cassettes at paths, annotated by the
// report at reportPath when there is one; with a report and no paths, the
// cassettes the report names.
func viewDocs(paths []string, reportPath string) (view.Cassettes, error) {
	var rep *view.Report
	if reportPath != "" {
		f, err := os.Open(reportPath)
		if err != nil {
			return nil, err
		}
		rep, err = view.ReadReport(reportPath, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			paths = rep.Paths()
		}
	}
	if len(paths) == 0 {
		return nil, usagef("view needs at least one CASSETTE (or --report FILE)")
	}
	docs := make(view.Cassettes, 0, len(paths))
	annotated := 0
	for _, path := range paths {
		c, err := cassettes.Load(path)
		if err != nil {
			return nil, err
		}
		d := view.Build(filepath.Base(path), c)
		if rep != nil && rep.Annotate(d, path) {
			annotated++
		}
		docs = append(docs, d)
	}
	if rep != nil && annotated == 0 {
		return nil, fmt.Errorf("report %s: it names none of the cassettes given (it is about %s)", reportPath, strings.Join(rep.Paths(), ", "))
	}
	return docs, nil
}

// openBrowser opens url in the desktop's browser.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
