package sharding

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
)

// DefaultVirtualNodes is how many points each member gets on the ring
// when NewRing is given 0. More points spread the keys more evenly (the
// spread shrinks as 1/√points) at the cost of a larger ring to search;
// 1000 keeps every member well within ±20% of its fair share of a few
// thousand keys (about ±4% is one standard deviation).
const DefaultVirtualNodes = 1000

// Ring is a consistent hash ring: every member owns the points
// hash(member, i) for i < virtual nodes, on a circle of 64-bit hashes,
// and a key belongs to the member of the first point at or after
// hash(key), wrapping around. Adding or removing a member moves only the
// keys that fall between its points and their predecessors, about 1/N
// of all keys.
//
// A Ring is immutable: membership changes make a new one. It is safe for
// concurrent use.
type Ring struct {
	points       []point  // sorted by comparePoints
	members      []string // sorted, unique
	virtualNodes int      // points per member
}

// point is one virtual node.
type point struct {
	hash   uint64
	member string
}

// NewRing returns the ring of members, each with virtualNodes points (0
// means DefaultVirtualNodes). The order of members does not matter. An
// empty member, a duplicate or a negative virtualNodes is an error. A
// ring of no members owns nothing: Owner returns "".
func NewRing(members []string, virtualNodes int) (*Ring, error) {
	return rebuild(nil, members, virtualNodes)
}

// rebuild is NewRing reusing prev's points (prev may be nil). A
// member's points depend on its name and the virtual nodes alone, so a
// member of prev, built with as many, keeps its points, already in
// order, and only the members new to prev are hashed; the two sorted
// runs are then merged. The ring is NewRing's, point for point
// (TestARingRebuiltFromAnotherIsTheRingBuiltAfresh). A sharder rebuilds
// its ring as members come and go: at 1000 points a member, hashing and
// sorting every member's were most of the work.
// Cost: O(n log n) for the n new points, O(all points) for the rest.
func rebuild(prev *Ring, members []string, virtualNodes int) (*Ring, error) {
	if virtualNodes < 0 {
		return nil, fmt.Errorf("sharding: virtual nodes (%d) must not be negative", virtualNodes)
	}
	if virtualNodes == 0 {
		virtualNodes = DefaultVirtualNodes
	}
	sorted := slices.Sorted(slices.Values(members))
	for i, m := range sorted {
		if m == "" {
			return nil, fmt.Errorf("sharding: a ring member is empty")
		}
		if i > 0 && sorted[i-1] == m {
			return nil, fmt.Errorf("sharding: ring member %q is listed twice", m)
		}
	}
	if prev == nil || prev.virtualNodes != virtualNodes {
		prev = &Ring{}
	}
	var kept, added []point
	for _, p := range prev.points {
		if _, ok := slices.BinarySearch(sorted, p.member); ok {
			kept = append(kept, p)
		}
	}
	for _, m := range sorted {
		if _, ok := slices.BinarySearch(prev.members, m); ok {
			continue
		}
		for i := range virtualNodes {
			added = append(added, point{hash: hash(m + "#" + strconv.Itoa(i)), member: m})
		}
	}
	slices.SortFunc(added, comparePoints)
	r := &Ring{members: sorted, virtualNodes: virtualNodes, points: make([]point, 0, len(kept)+len(added))}
	for len(kept) > 0 && len(added) > 0 {
		if comparePoints(kept[0], added[0]) <= 0 {
			r.points, kept = append(r.points, kept[0]), kept[1:]
		} else {
			r.points, added = append(r.points, added[0]), added[1:]
		}
	}
	r.points = append(append(r.points, kept...), added...)
	return r, nil
}

// comparePoints orders points by hash. Ties (two points with one hash)
// are broken by member name, so every replica that builds a ring of the
// same members builds the same ring.
func comparePoints(a, b point) int {
	if a.hash != b.hash {
		return cmp.Compare(a.hash, b.hash)
	}
	return cmp.Compare(a.member, b.member)
}

// Owner returns the member that owns key, or "" if the ring is empty.
func (r *Ring) Owner(key string) string {
	if len(r.points) == 0 {
		return ""
	}
	h := hash(key)
	i, _ := slices.BinarySearchFunc(r.points, h, func(p point, h uint64) int { return cmp.Compare(p.hash, h) })
	if i == len(r.points) {
		i = 0 // past the last point: wrap around to the first
	}
	return r.points[i].member
}

// Members returns the ring's members, sorted. The slice is a copy.
func (r *Ring) Members() []string { return slices.Clone(r.members) }

// hash is the first 8 bytes of SHA-256: slower than FNV, but its output
// is uniform even for inputs that differ in one trailing digit, which is
// what virtual node names do.
func hash(s string) uint64 {
	sum := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(sum[:8])
}
