package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/listwatch/informer/bench/scale"
	"github.com/listwatch/informer/testenv"
)

// pairsRun is what the flags ask of the parent.
type pairsRun struct {
	shape    string // scale.ConfigMaps or scale.Widgets
	n, pairs int
	// relists > 0 times that many relists per child instead of the
	// initial sync.
	relists    int
	names      []string // the variants; the last is every ratio's base
	profileDir string   // "": no CPU profiles
	before     string   // an earlier syncpair binary, for ours-before; "": none
	repeated   bool     // the ConfigMaps carry the ladder's one text
	record     string   // the markdown record to write; "": none
	// cborGate starts the control plane with its CBORServingAndStorage
	// gate on, for the whole run: every variant reads from a server that
	// answers CBOR to whoever offers it.
	cborGate bool
}

// cborGates is the feature gate -cbor-gate turns on (KEP-4222: alpha,
// off by default in 1.37).
var cborGates = map[string]bool{"CBORServingAndStorage": true}

// check returns an error for flags that do not go together, naming what
// would.
func (r pairsRun) check() error {
	variants := variantsOf(r.shape)
	switch {
	case variants == nil:
		return fmt.Errorf("syncpair: -shape %q: want one of %v", r.shape, shapeNames())
	case r.repeated && r.shape != scale.ConfigMaps:
		return fmt.Errorf("syncpair: -payload repeated is for %s; %s always carry the scale ladder's random payload", scale.ConfigMaps, r.shape)
	case r.cborGate && r.shape != scale.Widgets:
		return fmt.Errorf("syncpair: -cbor-gate is for -shape %s: no variant of %s offers CBOR, so the gate would change nothing they read", scale.Widgets, r.shape)
	}
	kinds := scale.RelistKindsOf(r.shape)
	for _, name := range r.names {
		if r.relists > 0 && name != "ours-before" && !slices.Contains(kinds, name) {
			return fmt.Errorf("syncpair: -relists of %s measures %v, not %q", r.shape, kinds, name)
		}
		if _, ok := variants[name]; r.relists == 0 && !ok && name != "ours-before" {
			return fmt.Errorf("syncpair: %s have no variant %q (have %v)", r.shape, name, variantNames(r.shape))
		}
		if want, ok := answeredIn[name]; ok && want.name == cborEncoding.name && !r.cborGate {
			return fmt.Errorf("syncpair: %s must be answered in CBOR, which kube-apiserver serves only with its CBORServingAndStorage gate on: add -cbor-gate", name)
		}
	}
	return nil
}

// objects says what the run syncs, as a record states it.
func (r pairsRun) objects() string {
	if r.shape == scale.Widgets {
		return fmt.Sprintf("%d Widgets (a custom resource, random payload)", r.n)
	}
	return fmt.Sprintf("%d ConfigMaps (%s payload)", r.n, payloadName(r.repeated))
}

// plane says how the control plane was started, as a record states it:
// "" at its defaults.
func (r pairsRun) plane() string {
	if r.cborGate {
		return ", served by kube-apiserver --feature-gates=CBORServingAndStorage=true"
	}
	return ""
}

// runPairs starts a control plane, creates r.n objects of r.shape, then
// runs r.pairs samples of every variant, interleaved, and prints each
// sample and the medians.
func runPairs(ctx context.Context, r pairsRun) error {
	if err := r.check(); err != nil {
		return err
	}
	opts := testenv.Options{}
	if r.cborGate {
		opts.FeatureGates = cborGates
	}
	cp, err := testenv.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer cp.Stop()
	start := time.Now()
	if r.shape == scale.Widgets {
		err = scale.Populate(ctx, cp.Config(), scale.Widgets, r.n)
	} else {
		err = populate(ctx, cp.Config(), r.n, r.repeated)
	}
	if err != nil {
		return err
	}
	log.Printf("created %s%s in %v", r.objects(), r.plane(), time.Since(start).Round(time.Second))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	measured := measuredProcesses{etcd: cp.PIDs()[0], apiserver: cp.PIDs()[1]}
	samples := map[string][]sample{}
	var lines []string
	width := 18 // the variants' column: wide enough for the longest name
	for _, name := range r.names {
		width = max(width, len(name))
	}
	for pair := range r.pairs {
		order := slices.Clone(r.names)
		if pair%2 == 1 {
			slices.Reverse(order)
		}
		for _, name := range order {
			binary, variant := self, name
			if name == "ours-before" {
				binary, variant = r.before, "ours"
			}
			s, err := runSample(ctx, r, name, binary, variant, cp.KubeconfigPath(), measured)
			if err != nil {
				return err
			}
			line := fmt.Sprintf("pair %d %-*s %.2f s, %.2f CPU-s, apiserver %.2f CPU-s, %.0f B/object, peak %.2f× steady, load %.2f, others %.2f cores; %s → %s",
				pair+1, width, name, s.Seconds, s.CPU, s.ServerCPU, s.HeapPerObject, s.PeakOverSteady, s.Load, s.Others, s.Request, s.Answer)
			if r.relists > 0 {
				line = fmt.Sprintf("pair %d %-*s relist %.2f s, %.2f CPU-s, peak %.2f× steady, load %.2f, others %.2f cores",
					pair+1, width, name, s.RelistSeconds, s.RelistCPU, s.RelistPeak, s.Load, s.Others)
				if s.Request != "" { // an older build, for -before, does not log its list
					line += fmt.Sprintf("; first list %s → %s", s.Request, s.Answer)
				}
			}
			log.Print(line)
			lines = append(lines, line)
			s.Variant = name
			samples[name] = append(samples[name], s)
		}
	}
	var table bytes.Buffer
	report(&table, r.names, samples, r.relists > 0)
	fmt.Print(table.String())
	if r.record == "" {
		return nil
	}
	text := fmt.Sprintf("# syncpair %s\n\nRecorded by `syncpair` on %s, %d cores, %s%s; each line one child process.\n\n```text\n%s\n```\n%s",
		recordedCommand(), time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), r.objects(), r.plane(), strings.Join(lines, "\n"), table.String())
	return os.WriteFile(r.record, []byte(text), 0o644)
}

// recordedCommand is this command's arguments as a record shows them:
// without -record, and with -before's binary by its name alone, so that
// no path of this machine is written into the repository.
func recordedCommand() string {
	var out []string
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if (name == "record" || name == "before") && !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		switch name {
		case "record":
			continue
		case "before":
			out = append(out, "-before", filepath.Base(value))
		default:
			out = append(out, args[i])
		}
	}
	return strings.Join(out, " ")
}

// measuredProcesses are the processes a sample measures besides its
// child: the user CPU the machine spent beyond theirs, the child's and
// this process's is foreign load.
type measuredProcesses struct{ etcd, apiserver int }

// cpuReading is what one reading of the measured processes found.
type cpuReading struct {
	apiserver float64 // the apiserver's CPU-seconds, user and system
	// serverUser, selfUser and machineUser are the user CPU-seconds of
	// etcd and the apiserver, of this process, and of the whole machine
	// (see scale.MachineUserSeconds).
	serverUser, selfUser, machineUser float64
}

// read reads the CPU times of etcd, the apiserver, this process and the
// machine, each once.
func (m measuredProcesses) read() (cpuReading, error) {
	etcdUser, _, err := scale.ProcessTimes(m.etcd)
	if err != nil {
		return cpuReading{}, err
	}
	apiUser, apiSystem, err := scale.ProcessTimes(m.apiserver)
	if err != nil {
		return cpuReading{}, err
	}
	machine, err := scale.MachineUserSeconds()
	return cpuReading{apiserver: apiUser + apiSystem, serverUser: etcdUser + apiUser, selfUser: selfUserCPU(), machineUser: machine}, err
}

// runSample runs one child of binary, variant name of r, and measures the
// processes around it: the apiserver's CPU, and the CPU every other
// process took (Others, in cores).
func runSample(ctx context.Context, r pairsRun, label, binary, name, kubeconfig string, measured measuredProcesses) (sample, error) {
	profileDir := r.profileDir
	load := loadAverage()
	if profileDir != "" { // one directory per variant: ours-before's child calls itself ours
		profileDir = filepath.Join(profileDir, label)
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return sample{}, err
		}
	}
	args := []string{"-child", name, "-kubeconfig", kubeconfig, "-n", strconv.Itoa(r.n), "-profile", profileDir}
	if r.relists > 0 { // an older build, for -before, may not know the flag
		args = append(args, "-relists", strconv.Itoa(r.relists))
	}
	if r.shape != scale.ConfigMaps { // nor this one
		args = append(args, "-shape", r.shape)
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, binary, args...)
	if env := childEnv[name]; env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = &out, &errOut
	before, err := measured.read()
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("syncpair: %s: %w\n%s", name, err, errOut.String())
	}
	wall := time.Since(t0).Seconds()
	after, err := measured.read()
	if err != nil {
		return sample{}, err
	}
	var s sample
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		return sample{}, fmt.Errorf("syncpair: %s printed %q: %w", name, out.String(), err)
	}
	child := cmd.ProcessState.UserTime().Seconds()
	others := (after.machineUser - before.machineUser) - child - (after.serverUser - before.serverUser) - (after.selfUser - before.selfUser)
	s.ServerCPU, s.Load, s.Others = after.apiserver-before.apiserver, load, max(others, 0)/wall
	return s, nil
}
