package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// mcpmocktestGroup runs mcpmocktest's benchmark of a whole test's life
// (start, connect, one call, close) and prints its medians.
func mcpmocktestGroup(w io.Writer) error {
	var out bytes.Buffer
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "StartConnectCallClose", "-benchtime", "300x", "./mcpmocktest")
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mcpmocktest benchmark: %w\n%s", err, out.String())
	}
	fmt.Fprintln(w, "| mcpmocktest: start, connect, one call, close | median (bar ≤ 2 ms) |")
	fmt.Fprintln(w, "|---|---|")
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		med := "?"
		for i := 2; i+1 < len(f); i++ {
			if strings.HasPrefix(f[i+1], "median") {
				med = f[i] + " " + f[i+1]
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", strings.TrimPrefix(f[0], "BenchmarkStartConnectCallClose/"), med)
	}
	fmt.Fprintln(w)
	return nil
}
