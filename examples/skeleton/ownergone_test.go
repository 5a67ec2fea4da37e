package main

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// The skeleton deletes a Secret only when its controller is the v1
// ConfigMap of its name, that ConfigMap is gone, and so is every other
// owner (TestASecretWhoseOwnersAreAllGoneIsDeleted). A Secret controlled by a "ConfigMap" of another API
// group (a custom resource's kind), with a second owner that still
// exists, or owned but not controlled by a ConfigMap, is left alone. Found by the review of ownerGone: the first version
// deleted both, and the first one's ConfigMap then never had a Secret
// (a Secret's delete brings back only a core owner's key); the second
// version deleted an owned but uncontrolled one (found by its review).
func TestASecretThatIsNotOnlyAGoneConfigMapsIsNotDeleted(t *testing.T) {
	controller := func(apiVersion, name string, uid types.UID) metav1.OwnerReference {
		yes := true
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: "ConfigMap", Name: name, UID: uid, Controller: &yes}
	}
	for name, owners := range map[string]func(keeper types.UID) []metav1.OwnerReference{
		"a ConfigMap of another group controls it": func(types.UID) []metav1.OwnerReference {
			return []metav1.OwnerReference{controller("example.com/v1", "web", "their-uid")}
		},
		"an earlier ConfigMap controls it and a live one owns it too": func(keeper types.UID) []metav1.OwnerReference {
			return []metav1.OwnerReference{controller("v1", "web", "an-earlier-web"), {APIVersion: "v1", Kind: "ConfigMap", Name: "keeper", UID: keeper}}
		},
		"an earlier ConfigMap of its name owns it but does not control it": func(types.UID) []metav1.OwnerReference {
			return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "web", UID: "an-earlier-web"}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
				defer mem.Close()
				client, err := testenv.CoreV1Client(mem.Config())
				require.NoError(t, err)
				create := func(resource string, obj, into runtime.Object) {
					require.NoError(t, client.Post().Namespace("default").Resource(resource).Body(obj).Do(t.Context()).Into(into))
				}
				keeper, theirs := &corev1.ConfigMap{}, &corev1.Secret{}
				create("configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keeper"}}, keeper)
				create("configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}},
					Data: map[string]string{"k": "v"}}, &corev1.ConfigMap{})
				create("secrets", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"},
					OwnerReferences: owners(keeper.UID)}, Data: map[string][]byte{"password": []byte("theirs")}}, theirs)

				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- control(ctx, mem.Config(), "default", nil) }()
				time.Sleep(time.Minute) // simulated: many reconciles' worth
				got := &corev1.Secret{}
				err = client.Get().Namespace("default").Resource("secrets").Name("web").Do(context.Background()).Into(got)
				cancel()
				require.NoError(t, <-done)
				require.NoError(t, err, "the Secret was deleted")
				require.Equal(t, theirs.UID, got.UID, "the Secret was replaced")
				require.Equal(t, "theirs", string(got.Data["password"]), "the Secret was changed")
			})
		})
	}
}

// A Secret an earlier web controls and a keeper ConfigMap also owns, and
// keeper is gone too: deleted, or deleted and made anew (a new UID). No
// owner of the Secret exists, so a garbage collector would delete it,
// and chapter 08 leaves alone only a Secret "owned by a second object
// that still exists". The skeleton deletes it, and a labelled web, if
// there is one, gets a Secret of its own. Before, ownerGone looked only
// at a Secret with one owner: this one stayed for ever, and the new web
// was refused as if someone else's Secret had its name.
func TestASecretWhoseOwnersAreAllGoneIsDeleted(t *testing.T) {
	yes := true
	earlierWeb := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "web", UID: "an-earlier-web", Controller: &yes}
	for name, keeperMadeAnew := range map[string]bool{"keeper deleted": false, "keeper deleted and made anew": true} {
		for _, webNow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, a web now: %v", name, webNow), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
					defer mem.Close()
					client, err := testenv.CoreV1Client(mem.Config())
					require.NoError(t, err)
					create := func(resource string, obj, into runtime.Object) {
						require.NoError(t, client.Post().Namespace("default").Resource(resource).Body(obj).Do(t.Context()).Into(into))
					}
					if keeperMadeAnew {
						create("configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keeper"}}, &corev1.ConfigMap{})
					}
					web := &corev1.ConfigMap{}
					if webNow {
						create("configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}},
							Data: map[string]string{"k": "new"}}, web)
					}
					left := &corev1.Secret{}
					create("secrets", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"},
						OwnerReferences: []metav1.OwnerReference{earlierWeb, {APIVersion: "v1", Kind: "ConfigMap", Name: "keeper", UID: "a-gone-keeper"}}},
						Data: map[string][]byte{"k": []byte("old")}}, left)

					ctx, cancel := context.WithCancel(t.Context())
					done := make(chan error, 1)
					go func() { done <- control(ctx, mem.Config(), "default", nil) }()
					time.Sleep(time.Minute) // simulated: many reconciles' worth
					got := &corev1.Secret{}
					err = client.Get().Namespace("default").Resource("secrets").Name("web").Do(context.Background()).Into(got)
					cancel()
					require.NoError(t, <-done)
					if !webNow {
						require.True(t, apierrors.IsNotFound(err), "the Secret none of whose owners exists was kept: %v", err)
						return
					}
					require.NoError(t, err)
					require.NotEqual(t, left.UID, got.UID, "the Secret none of whose owners exists was kept")
					require.Equal(t, web.UID, controllerUID(got), "web's Secret is controlled by web")
					require.Equal(t, "new", string(got.Data["k"]), "web's Secret has web's data")
				})
			})
		}
	}
}
