package sharding_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// Scenario (member a keys by ring key; cache held by hand, as a watch
// would change it; a scripted server), TestAnOwedChildIsNotLetGoOnceItsParentIsBackAndKeptOnTheMember
// with kid recorded as kept first:
//
//   - ConfigMap api is a's and kept; its controller is Deployment top,
//     not sharded: its ring key is ns/top. ConfigMap kid is a's and
//     draining, a child of api: ring key ns/api. The call of ns/api
//     leaves kid with its kept parent (keepChildren: kid -> uid-api).
//   - The sharder drains api. The call of ns/top lets api go (it leaves
//     a's cache, MOVED, not deleted); kid's PATCHes are refused (500) in
//     letGoChildren and payOwed: kid is owed to ns/top at api's real
//     version (rv 15). In the same call payKept finds api out of the
//     cache, takes it for deleted, and its own refused PATCH owes kid
//     again under ns/top, overwriting the record with
//     {uid-api: deletedMark}.
//   - The ring moves back: api is a's again, kept (rv 20). Its arrival
//     brings ns/top. payOwed asks backHere(api, uid-api, {uid-api:
//     deleted}): "no version of it comes back", so api, in a's cache,
//     a's and kept, is not seen, and kid is let go.
//
// Promise broken: payOwed's doc, "a parent back here and kept (the ring
// moved back) keeps its child, whose drain the sharder takes back";
// acknowledge's, "An object whose parent is still here ... is not let
// go, at any try". payKept's "left this member's cache" is "deleted"
// only for a parent deleted; a parent let go (moved) leaves it too.
// Passing means no fifth PATCH: kid stays with api.
func TestAKeptChildWhoseParentMovedAwayIsNotLetGoOnceThatParentIsBackAndKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard, api, kid := ownedChildScene(t)
		delete(api.Labels, shard.DrainLabel()) // kept, at first
		idx, cms := cacheOf(t, api, kid)
		draining := api.DeepCopy()
		draining.ResourceVersion = "15"
		draining.Labels[shard.DrainLabel()] = "true"
		srv := &scriptedServer{}
		srv.onPatch = func(n int, _ []byte) (int, []byte) {
			switch n {
			case 1: // api let go: it leaves a's cache (moved to another member)
				require.NoError(t, idx.Delete(draining))
				return http.StatusOK, configMapJSON(t, draining)
			case 2, 3, 4: // kid refused: letGoChildren, payOwed, payKept
				return http.StatusInternalServerError, webhookHiccup
			}
			return http.StatusOK, configMapJSON(t, kid)
		}
		reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps", doNothing)

		_, err := reconcile(ctx, informer.Key{Namespace: "ns", Name: "api"}) // kid's ring key: kid is left with kept api
		require.NoError(t, err)
		require.Empty(t, srv.paths(), "kid stays with its kept parent")

		require.NoError(t, idx.Update(draining)) // the sharder drains api
		topKey := informer.Key{Namespace: "ns", Name: "top"}
		_, err = reconcile(ctx, topKey)
		require.Error(t, err, "kid's refused acknowledgement is returned, so ns/top comes back")
		require.Len(t, srv.paths(), 4, "api, then kid (letGoChildren, payOwed, payKept), were PATCHed")

		// The ring moves back: the sharder gives api to a again, kept.
		back := api.DeepCopy()
		back.ResourceVersion = "20"
		require.NoError(t, idx.Add(back))

		_, _ = reconcile(ctx, topKey) // api's arrival brings ns/top
		require.Len(t, srv.paths(), 4,
			"kid was let go while its parent api (moved away, not deleted) is back in a's cache, a's and kept (PATCHes %q)", srv.paths())
	})
}
