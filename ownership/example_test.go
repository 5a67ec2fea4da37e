package ownership_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/ownership"
)

// A ConfigMap in namespace shop owns its copy in namespace web, which an
// owner reference cannot say. The Mark says it, and tells the copy from
// a user's ConfigMap of the same name and from the copy an earlier
// owner of that name left.
func Example() {
	mark, err := ownership.New("copier")
	if err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "7e57-0001"}}
	copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}}
	if err := mark.Set(copied, owner); err != nil {
		panic(err)
	}
	fmt.Println(copied.Labels, copied.Annotations)

	key, uid, ok := mark.Owner(copied)
	fmt.Println(key, uid, ok, mark.Owns(owner, copied))

	users := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}}
	_, _, ok = mark.Owner(users)
	fmt.Println("a user's:", ok)

	remade := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "7e57-0002"}}
	fmt.Println("the owner made anew owns it:", mark.Owns(remade, copied))
	// Output:
	// map[app.kubernetes.io/managed-by:copier ownership.listwatch.dev/owner-uid:7e57-0001] map[ownership.listwatch.dev/owner:shop/settings]
	// shop/settings 7e57-0001 true true
	// a user's: false
	// the owner made anew owns it: false
}
