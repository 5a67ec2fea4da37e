package sharding_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/sharding"
)

// A ring assigns each key to one member. When a member joins, keys move
// only to it; the others keep what they had.
func ExampleRing() {
	before, _ := sharding.NewRing([]string{"a", "b"}, 0)
	after, _ := sharding.NewRing([]string{"a", "b", "c"}, 0)
	for _, key := range []string{"shop/order-12", "shop/order-13", "shop/order-14", "shop/order-15"} {
		fmt.Printf("%s: %s → %s\n", key, before.Owner(key), after.Owner(key))
	}
	// Output:
	// shop/order-12: a → a
	// shop/order-13: b → b
	// shop/order-14: b → c
	// shop/order-15: a → c
}

// A member's informer selects its own objects by label; Owns tells an
// object it may reconcile from one it is asked to let go.
func ExampleShard() {
	shard := sharding.Shard{Ring: "orders", Member: "replica-1-9f8e7d6c"}
	fmt.Println(shard.Selector())

	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{shard.Label(): shard.Member}}}
	fmt.Println(shard.Owns(obj))
	obj.Labels[shard.DrainLabel()] = "true" // the sharder asks this member to let go
	fmt.Println(shard.Owns(obj))
	// Output:
	// shard.listwatch.dev/orders=replica-1-9f8e7d6c
	// true
	// false
}

// A child sits on the ring at its owner's key, so it lands with its owner.
func ExampleRingKey() {
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "order-7", UID: "1"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "order-7-invoice",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}}}
	fmt.Println(sharding.RingKey(parent))
	fmt.Println(sharding.RingKey(child))
	// Output:
	// shop/order-7
	// shop/order-7
}

// Constructors check their input and name the field.
func ExampleNewMember() {
	_, err := sharding.NewMember(sharding.MemberConfig{Ring: "Orders", Name: "replica-1"})
	fmt.Println(err)
	// Output: sharding: Ring ("Orders") must be a DNS label of at most 40 characters: it is part of label keys and Lease names
}
