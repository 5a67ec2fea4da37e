// Command benchdoc turns the output of `go test -bench .` in bench/ into
// docs/13-benchmarks.md: the ours/client-go ratio table, which targets were
// met, the machine and versions, and SVG charts drawn from the same
// numbers. Nothing in the page is typed by hand except bench/NOTES.md,
// which it includes under a heading of its own.
//
// It runs in the bench module's directory (`make bench` runs it):
//
//	go run ./cmd/benchdoc -in ../bin/bench.txt -benchstat ../bin/benchstat.txt -out ../docs/13-benchmarks.md
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	in := flag.String("in", "../bin/bench.txt", "raw `go test -bench` output")
	stat := flag.String("benchstat", "", "benchstat output to include (optional)")
	notes := flag.String("notes", "NOTES.md", "hand-written notes to include (optional)")
	out := flag.String("out", "../docs/13-benchmarks.md", "the page to write; charts go in a directory beside it")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "benchdoc: turn `go test -bench` output into docs/13-benchmarks.md and its charts")
		flag.PrintDefaults()
	}
	flag.Parse()

	res, err := parse(*in)
	if err != nil {
		log.Fatal(err)
	}
	chartDir := strings.TrimSuffix(*out, ".md")
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		log.Fatal(err)
	}
	charts, err := drawCharts(res, chartDir)
	if err != nil {
		log.Fatal(err)
	}
	var statText, notesText string
	if *stat != "" {
		b, err := os.ReadFile(*stat)
		if err != nil {
			log.Fatal(err)
		}
		statText = string(b)
	}
	if b, err := os.ReadFile(*notes); err == nil {
		notesText = string(b)
	}
	rel := make([]string, len(charts))
	for i, c := range charts {
		rel[i], _ = filepath.Rel(filepath.Dir(*out), c)
	}
	page := render(res, rel, statText, notesText)
	if err := os.WriteFile(*out, []byte(page), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", *out, "and", len(charts), "charts in", chartDir)
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// moduleVersion reads a requirement's version from go.mod.
func moduleVersion(path string) string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	return "unknown"
}
