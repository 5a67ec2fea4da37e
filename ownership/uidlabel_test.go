package ownership_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/ownership"
)

// An owner's UID goes into a label value (OwnerUIDLabel). The API server
// gives every object a 36-character UUID, which is one; a UID from
// elsewhere (a fake, a hand-made owner) may not be, and the child's write
// would then fail at the server with a 422 that names the label, not the
// owner. Set refuses it first, naming the owner and the UID, and leaves
// the child unmarked. (Found by our own hunt: Set wrote the label.)
func TestSetRefusesAnOwnerUIDThatIsNotALabelValue(t *testing.T) {
	m, err := ownership.New("copier")
	require.NoError(t, err)
	for _, uid := range []types.UID{types.UID(strings.Repeat("a", 64)), "has/slash", "-starts-with-a-dash"} {
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: uid}}
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}}
		err := m.Set(child, owner)
		require.ErrorContains(t, err, "shop/settings", "uid %q", uid)
		require.ErrorContains(t, err, "not a label value", "uid %q", uid)
		require.Empty(t, child.Labels, "a refused Set marked the child")
	}
}
