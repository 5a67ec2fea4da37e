package replicas

// What the replicas' own lines say about now: whose terms run, and whose
// sharder leads. The checker uses these to pick targets and to know which
// members must own the objects.

// liveMembers returns ring's members whose term began and has not
// ended, in processes still running, by member id.
func (f *fleet) liveMembers(ring string) map[string]*proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	byName := map[string]*proc{}
	for _, p := range f.procs {
		if p.exitedAt.IsZero() && p.killedAt.IsZero() {
			byName[p.name] = p
		}
	}
	live := map[string]*proc{}
	for _, ev := range f.events {
		if len(ev.fields) < 2 || ev.fields[0] != ring {
			continue
		}
		switch ev.kind {
		case "member":
			if p := byName[ev.proc]; p != nil {
				live[ev.fields[1]] = p
			}
		case "stopped":
			delete(live, ev.fields[1])
		}
	}
	return live
}

// memberIDs returns every member id any replica ever printed, with its
// process's name.
func (f *fleet) memberIDs() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, ev := range f.events {
		if ev.kind == "member" && len(ev.fields) == 2 {
			out[ev.fields[1]] = ev.proc
		}
	}
	return out
}

// leader returns the running process whose sharder of ring said last
// that it leads, or nil.
func (f *fleet) leader(ring string) *proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	leading := map[string]bool{}
	for _, ev := range f.events {
		if ev.kind == "leading" && len(ev.fields) == 2 && ev.fields[0] == ring {
			leading[ev.proc] = ev.fields[1] == "true"
		}
	}
	for _, p := range f.procs {
		if p.exitedAt.IsZero() && p.killedAt.IsZero() && leading[p.name] {
			return p
		}
	}
	return nil
}

// isProc reports whether name is one of the fleet's processes: the
// identity the sharder candidates hold their election's Lease under.
func (f *fleet) isProc(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		if p.name == name {
			return true
		}
	}
	return false
}
