package sharding

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// keys returns n object keys shaped like real ones.
func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("shop/order-%05d", i)
	}
	return out
}

func memberIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("replica-%d-%06x", i, i*7919)
	}
	return out
}

// owners maps every key to its owner on r.
func owners(r *Ring, ks []string) map[string]string {
	out := make(map[string]string, len(ks))
	for _, k := range ks {
		out[k] = r.Owner(k)
	}
	return out
}

func TestEveryMemberHoldsBetween08And12OverNOfTenThousandKeys(t *testing.T) {
	ks := keys(10_000)
	for n := 1; n <= 8; n++ {
		r, err := NewRing(memberIDs(n), 0)
		require.NoError(t, err)
		count := map[string]int{}
		for _, owner := range owners(r, ks) {
			count[owner]++
		}
		require.Len(t, count, n, "every member owns some keys")
		fair := float64(len(ks)) / float64(n)
		for m, c := range count {
			require.InDelta(t, fair, float64(c), 0.2*fair, "N=%d: %s holds %d keys, fair share %.0f", n, m, c, fair)
		}
	}
}

// A join moves keys only to the new member, a leave only from the one
// that left, and either way at most 1.3/N of the keys (N: the larger
// membership).
func TestAJoinOrALeaveMovesAtMost13OverNOfTheKeysAndOnlyToOrFromThatMember(t *testing.T) {
	ks := keys(10_000)
	for n := 2; n <= 8; n++ {
		all := memberIDs(n)
		small, err1 := NewRing(all[:n-1], 0)
		large, err2 := NewRing(all, 0)
		require.NoError(t, err1)
		require.NoError(t, err2)
		before, after := owners(small, ks), owners(large, ks)
		moved := 0
		for _, k := range ks {
			if before[k] != after[k] {
				moved++
				require.Equal(t, all[n-1], after[k], "a join moves keys only to the joining member")
			}
		}
		// A leave is the same comparison read backwards: the keys that
		// moved are exactly those the leaving member held.
		t.Logf("N=%d: a join or leave moves %d of %d keys (%.2f/N)", n, moved, len(ks), float64(moved*n)/float64(len(ks)))
		require.LessOrEqual(t, float64(moved), 1.3*float64(len(ks))/float64(n))
	}
}

func TestTheRingIsTheSameWhateverTheOrderOfItsMembers(t *testing.T) {
	a, err1 := NewRing([]string{"a", "b", "c"}, 50)
	b, err2 := NewRing([]string{"c", "a", "b"}, 50)
	require.NoError(t, err1)
	require.NoError(t, err2)
	require.Equal(t, owners(a, keys(1000)), owners(b, keys(1000)))
	require.Equal(t, []string{"a", "b", "c"}, b.Members())
}

func TestNewRingRejectsEmptyAndDuplicateMembersAndNegativeVirtualNodes(t *testing.T) {
	_, err := NewRing([]string{"a", ""}, 0)
	require.ErrorContains(t, err, "empty")
	_, err = NewRing([]string{"a", "b", "a"}, 0)
	require.ErrorContains(t, err, `"a" is listed twice`)
	_, err = NewRing([]string{"a"}, -1)
	require.ErrorContains(t, err, "negative")
	empty, err := NewRing(nil, 0)
	require.NoError(t, err)
	require.Equal(t, "", empty.Owner("any/key"), "an empty ring owns nothing")
}

// A ring rebuilt from another (as a sharder's, when members come and
// go) is the ring NewRing builds of its members, point for point,
// whatever members the two share, and whatever virtual nodes the other
// was built with.
func TestARingRebuiltFromAnotherIsTheRingBuiltAfresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		names := rapid.SliceOfDistinct(rapid.StringMatching(`m-[a-e]{1,2}`), rapid.ID[string])
		before, after := names.Draw(t, "before"), names.Draw(t, "after")
		vBefore := rapid.IntRange(1, 50).Draw(t, "virtual nodes before")
		v := rapid.SampledFrom([]int{vBefore, rapid.IntRange(1, 50).Draw(t, "virtual nodes")}).Draw(t, "virtual nodes after")
		prev, err := NewRing(before, vBefore)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rebuild(prev, after, v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewRing(after, v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.points, want.points) || !slices.Equal(got.members, want.members) || got.virtualNodes != want.virtualNodes {
			t.Fatalf("rebuilt from %v: %d points of %v, afresh %d of %v", before, len(got.points), got.members, len(want.points), want.members)
		}
	})
}
