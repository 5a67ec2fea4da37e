package scale

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// CountObjects asks the apiserver how many objects of a shape (a core/v1
// resource such as ConfigMaps, or Widgets) it holds in every namespace,
// cheaply: it lists one, and reads how many remain. The apiserver keeps a
// ConfigMap or two of its own, so a cluster populated with n ConfigMaps
// holds a few more.
func CountObjects(ctx context.Context, cfg *rest.Config, resource string) (int, error) {
	client, err := clientFor(cfg, resource)
	if err != nil {
		return 0, err
	}
	obj, err := client.Get().Resource(resource).VersionedParams(&metav1.ListOptions{Limit: 1}, metav1.ParameterCodec).Do(ctx).Get()
	if err != nil {
		return 0, fmt.Errorf("scale: counting %s: %w", resource, err)
	}
	list, err := meta.ListAccessor(obj)
	if err != nil {
		return 0, fmt.Errorf("scale: counting %s: %w", resource, err)
	}
	n := meta.LenList(obj)
	if remaining := list.GetRemainingItemCount(); remaining != nil {
		n += int(*remaining)
	}
	return n, nil
}
