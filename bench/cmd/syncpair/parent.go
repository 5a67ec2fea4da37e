package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/bench/scale"
	"github.com/listwatch/informer/testenv"
)

// runPairs starts a control plane, creates n ConfigMaps, then runs pairs
// samples of every variant, interleaved, and prints each sample and the
// medians.
func runPairs(ctx context.Context, n, pairs, relists int, names []string, profileDir, before string, repeated bool) error {
	for _, name := range names {
		if _, ok := variants[name]; !ok && name != "ours-before" {
			return fmt.Errorf("syncpair: no variant %q (have %v)", name, variantNames())
		}
	}
	cp, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		return err
	}
	defer cp.Stop()
	start := time.Now()
	if err := populate(ctx, cp.Config(), n, repeated); err != nil {
		return err
	}
	log.Printf("created %d ConfigMaps in %v", n, time.Since(start).Round(time.Second))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	apiserver := cp.PIDs()[len(cp.PIDs())-1]
	samples := map[string][]sample{}
	for pair := range pairs {
		order := slices.Clone(names)
		if pair%2 == 1 {
			slices.Reverse(order)
		}
		for _, name := range order {
			binary, variant := self, name
			if name == "ours-before" {
				binary, variant = before, "ours"
			}
			s, err := runSample(ctx, name, binary, variant, cp.KubeconfigPath(), n, relists, profileDir, apiserver)
			if err != nil {
				return err
			}
			if relists > 0 {
				log.Printf("pair %d %-14s relist %.2f s, %.2f CPU-s, peak %.2f× steady, load %.2f", pair+1, name, s.RelistSeconds, s.RelistCPU, s.RelistPeak, s.Load)
			} else {
				log.Printf("pair %d %-14s %.2f s, %.2f CPU-s, apiserver %.2f CPU-s, %.0f B/object, peak %.2f× steady, load %.2f; %s → %s",
					pair+1, name, s.Seconds, s.CPU, s.ServerCPU, s.HeapPerObject, s.PeakOverSteady, s.Load, s.Request, s.Answer)
			}
			s.Variant = name
			samples[name] = append(samples[name], s)
		}
	}
	report(names, samples, relists > 0)
	return nil
}

// runSample runs one child of binary and measures the apiserver around
// it.
func runSample(ctx context.Context, label, binary, name, kubeconfig string, n, relists int, profileDir string, apiserver int) (sample, error) {
	load := loadAverage()
	before, err := scale.CPUSeconds(apiserver)
	if err != nil {
		return sample{}, err
	}
	if profileDir != "" { // one directory per variant: ours-before's child calls itself ours
		profileDir = filepath.Join(profileDir, label)
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return sample{}, err
		}
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, "-child", name, "-kubeconfig", kubeconfig, "-n", strconv.Itoa(n), "-relists", strconv.Itoa(relists), "-profile", profileDir)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("syncpair: %s: %w\n%s", name, err, errOut.String())
	}
	after, err := scale.CPUSeconds(apiserver)
	if err != nil {
		return sample{}, err
	}
	var s sample
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		return sample{}, fmt.Errorf("syncpair: %s printed %q: %w", name, out.String(), err)
	}
	s.ServerCPU, s.Load = after-before, load
	return s, nil
}

// report prints each variant's medians, and its ratio to the last
// variant's: the geometric mean of the per-pair ratios with a 95%
// interval, as the scale ladder computes it (scale.PairedRatio).
func report(names []string, samples map[string][]sample, relists bool) {
	base := names[len(names)-1]
	fmt.Printf("\n| measure (median of %d; ratio to %s, 95%% interval) | %s |\n|---|%s\n", len(samples[base]), base, strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	type measure struct {
		name string
		of   func(sample) float64
	}
	measures := []measure{
		{"time to synced (s)", func(s sample) float64 { return s.Seconds }},
		{"informer process CPU (s)", func(s sample) float64 { return s.CPU }},
		{"apiserver CPU (s)", func(s sample) float64 { return s.ServerCPU }},
		{"live heap per cached object (B)", func(s sample) float64 { return s.HeapPerObject }},
		{"peak live heap during the sync / steady", func(s sample) float64 { return s.PeakOverSteady }},
	}
	if relists {
		measures = []measure{
			{"relist time (s)", func(s sample) float64 { return s.RelistSeconds }},
			{"informer process CPU per relist (s)", func(s sample) float64 { return s.RelistCPU }},
			{"peak live heap during the relist / steady", func(s sample) float64 { return s.RelistPeak }},
		}
	}
	for _, m := range measures {
		cells := []string{}
		for _, name := range names {
			cell := fmt.Sprintf("%.2f", median(samples[name], m.of))
			if name != base {
				r, err := scale.PairedRatio(values(samples[name], m.of), values(samples[base], m.of))
				if err == nil {
					cell += fmt.Sprintf(" (%.2f× [%.2f, %.2f])", r.Value, r.Low, r.High)
				}
			}
			cells = append(cells, cell)
		}
		fmt.Printf("| %s | %s |\n", m.name, strings.Join(cells, " | "))
	}
	for _, name := range names {
		if !relists {
			fmt.Printf("\n%s: %s → %s", name, samples[name][0].Request, samples[name][0].Answer)
		}
	}
	fmt.Println()
}

func median(samples []sample, of func(sample) float64) float64 {
	sorted := values(samples, of)
	slices.Sort(sorted)
	if len(sorted)%2 == 1 {
		return sorted[len(sorted)/2]
	}
	return (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
}

// values is of applied to each sample, in pair order.
func values(samples []sample, of func(sample) float64) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = of(s)
	}
	return out
}

// loadAverage is the one-minute load average: what else ran.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return v
}

// populate creates n ConfigMaps in ten namespaces, each with 900 random
// characters of data (base32 text from crypto/rand: gzip saves little),
// or, if repeated, the scale ladder's one 900-byte text, the same in
// every ConfigMap, which gzip shrinks to almost nothing.
func populate(ctx context.Context, cfg *rest.Config, n int, repeated bool) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for i := range 10 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sp-%d", i)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return scale.InParallel(n, func(i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%07d", i), Namespace: fmt.Sprintf("sp-%d", i%10),
				Labels: map[string]string{"app": "app-" + strconv.Itoa(i%100)}},
			Data: map[string]string{"payload": payload(repeated)},
		}
		_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
}

func payload(repeated bool) string {
	if repeated {
		return scale.RepeatedPayload
	}
	return randomText(900)
}

// randomText is n characters of base32 text from crypto/rand.
func randomText(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(rand.Text())
	}
	return b.String()[:n]
}
