package fakeapiserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
)

// leaseWritesInProtobuf is the Lease traffic of leader election and
// sharding, sent by their client (leaderelection.NewClient), which
// writes protobuf bodies and asks for protobuf answers, JSON after: a
// create, a create that loses the race, a get, a guarded takeover, one
// at a stale resourceVersion, a list by label (a sharder's poll), a get
// of a missing Lease, deletes whose DeleteOptions (protobuf too) name
// another uid and its own, and a takeover of the deleted Lease. Each answer is
// described by its status, content type, reason and what the client
// decoded.
func leaseWritesInProtobuf(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	client, err := leaderelection.NewClient(tg.cfg)
	require.NoError(t, err)
	do := func(what string, req *rest.Request, into runtime.Object) {
		var code int
		var ct string
		err := req.Do(ctx).StatusCode(&code).ContentType(&ct).Into(into)
		rec.add("%s: %d %s %s", what, code, ct, describeLeases(err, into))
	}
	leases := func() *rest.Request { return client.Get().Namespace(tg.namespace).Resource("leases") }
	holder := "x"
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"ring": "web"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
	a := &coordinationv1.Lease{}
	do("create", client.Post().Namespace(tg.namespace).Resource("leases").Body(lease), a)
	do("create it again", client.Post().Namespace(tg.namespace).Resource("leases").Body(lease), &coordinationv1.Lease{})
	do("get", leases().Name("a"), &coordinationv1.Lease{})

	taken := a.DeepCopy()
	other := "y"
	taken.Spec.HolderIdentity = &other
	a2 := &coordinationv1.Lease{}
	do("guarded takeover", client.Put().Namespace(tg.namespace).Resource("leases").Name("a").Body(taken), a2)
	rec.add("takeover's resourceVersion: %s", newer(a.ResourceVersion, a2.ResourceVersion))
	do("guarded takeover at a stale rv", client.Put().Namespace(tg.namespace).Resource("leases").Name("a").Body(taken), &coordinationv1.Lease{})
	do("list by label", leases().Param("labelSelector", "ring=web"), &coordinationv1.LeaseList{})
	do("list by another label", leases().Param("labelSelector", "ring=db"), &coordinationv1.LeaseList{})
	do("get missing", leases().Name("missing"), &coordinationv1.Lease{})
	stale := types.UID("00000000-0000-0000-0000-000000000001")
	do("delete with another uid as precondition", client.Delete().Namespace(tg.namespace).Resource("leases").Name("a").
		Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &stale}}), &metav1.Status{})
	do("delete with its uid as precondition", client.Delete().Namespace(tg.namespace).Resource("leases").Name("a").
		Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &a.UID}}), &metav1.Status{})
	do("guarded takeover of the deleted Lease", client.Put().Namespace(tg.namespace).Resource("leases").Name("a").Body(taken), &coordinationv1.Lease{})
}

// describeLeases is what the client made of an answer: the error's
// reason, or the Lease's name and holder, or the list's, or a
// Status's status.
func describeLeases(err error, obj runtime.Object) string {
	if err != nil {
		return string(apierrors.ReasonForError(err))
	}
	describe := func(l *coordinationv1.Lease) string {
		h := "<none>"
		if l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		return l.Name + " held by " + h
	}
	switch o := obj.(type) {
	case *coordinationv1.Lease:
		return describe(o)
	case *coordinationv1.LeaseList:
		var items []string
		for i := range o.Items {
			items = append(items, describe(&o.Items[i]))
		}
		return fmt.Sprintf("items %v", items)
	case *metav1.Status:
		return "Status " + o.Status
	}
	return fmt.Sprintf("a %T", obj)
}
