package reflector

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
)

// RESTListerWatcher lists and watches one collection on kube-apiserver
// through client-go's rest package: GET <collection>?limit=...&continue=...
// for List, and GET <collection>?watch=true&... for Watch. Create one with
// NewTypedListerWatcher (a Go type from a scheme), NewUnstructuredListerWatcher
// (any resource, as *unstructured.Unstructured) or NewMetadataListerWatcher
// (any resource, metadata only).
//
// It makes exactly one HTTP request per call: rest's own retries are off
// (see the package doc), so the reflector's backoff is the only retry
// policy. The rest.Config's QPS and Burst still limit its LIST requests;
// rest does not rate-limit watches.
type RESTListerWatcher[T informer.Object] struct {
	client *rest.RESTClient
	src    Source
	// listType is the Go type a LIST response must decode to, such as
	// *corev1.ConfigMapList.
	listType reflect.Type
	// listAccept and watchAccept, when set, replace the Accept header: the
	// metadata-only mode asks for a server-side transformation with them.
	listAccept, watchAccept string
	// mode is "unstructured" or "metadata only", "" for a Go type.
	mode string
	// protobufDecoder is set for a Go type read as protobuf: List then
	// decodes a protobuf answer item by item (see decodeProtobufList),
	// and a JSON one with this.
	protobufDecoder runtime.Decoder
}

// List implements ListerWatcher: one GET of one page.
//
// The response is decoded as whatever its kind says and then checked to be
// the expected list type. (rest's Result.Into would be shorter, but when
// the body is of another kind it returns no error and leaves the target
// empty: a silently empty list.)
func (lw *RESTListerWatcher[T]) List(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error) {
	if lw.protobufDecoder == nil {
		list, err := lw.request(opts, lw.listAccept).Do(ctx).Get()
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		return lw.checkedItems(list)
	}
	var all []T
	meta, err := lw.listProtobuf(ctx, opts, func(part []T) error {
		all = append(all, part...)
		return nil
	})
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	return all, meta, nil
}

// ListInParts implements PartLister: List, with a Go type read as
// protobuf handed to part a batch of items at a time as they are decoded
// (see decodeProtobufList), so that a large page never sits in memory
// whole; any other answer goes to part in one piece.
func (lw *RESTListerWatcher[T]) ListInParts(ctx context.Context, opts metav1.ListOptions, part func([]T) error) (metav1.ListMeta, error) {
	if lw.protobufDecoder != nil {
		return lw.listProtobuf(ctx, opts, part)
	}
	items, meta, err := lw.List(ctx, opts)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	return meta, part(items)
}

// listProtobuf lists a Go type read as protobuf: the answer is decoded as
// it arrives, a batch of items at a time, each handed to part (see
// decodeProtobufList). An answer in JSON instead (from a proxy, or an old
// server) is read whole and decoded as usual.
func (lw *RESTListerWatcher[T]) listProtobuf(ctx context.Context, opts metav1.ListOptions, part func([]T) error) (metav1.ListMeta, error) {
	body, err := lw.request(opts, lw.listAccept).Stream(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	defer body.Close()
	br := bufio.NewReaderSize(body, 64<<10)
	if start, _ := br.Peek(len(protobufPrefix)); bytes.Equal(start, protobufPrefix) {
		return decodeProtobufList(br, lw.listType.Elem().Name(), part)
	}
	whole, err := io.ReadAll(br)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	list, err := runtime.Decode(lw.protobufDecoder, whole)
	if err != nil {
		return metav1.ListMeta{}, fmt.Errorf("%w: the LIST answer: %v", ErrUnexpectedObject, err)
	}
	items, meta, err := lw.checkedItems(list)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	return meta, part(items)
}

// checkedItems checks that list is of the list type asked for, then takes
// it apart.
func (lw *RESTListerWatcher[T]) checkedItems(list runtime.Object) ([]T, metav1.ListMeta, error) {
	if got := reflect.TypeOf(list); got != lw.listType {
		return nil, metav1.ListMeta{}, fmt.Errorf("%w: the LIST answered %v (kind %q), want %v",
			ErrUnexpectedObject, got, list.GetObjectKind().GroupVersionKind().Kind, lw.listType)
	}
	return itemsOf[T](list)
}

// String names the collection, as Source.String does, and says how the
// objects are read when it is not as their Go type: "configmaps in
// namespace shop (metadata only)". The reflector takes it as its default
// name, so two ListerWatchers of one scope are told apart.
func (lw *RESTListerWatcher[T]) String() string {
	if lw.mode != "" {
		return lw.src.String() + " (" + lw.mode + ")"
	}
	return lw.src.String()
}

// Watch implements ListerWatcher: one streaming GET with watch=true.
func (lw *RESTListerWatcher[T]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return lw.request(opts, lw.watchAccept).Watch(ctx)
}

// request builds the GET for opts, with the Source's selectors.
func (lw *RESTListerWatcher[T]) request(opts metav1.ListOptions, accept string) *rest.Request {
	opts.LabelSelector = lw.src.LabelSelector
	opts.FieldSelector = lw.src.FieldSelector
	req := lw.client.Get().
		NamespaceIfScoped(lw.src.Namespace, lw.src.Namespace != "").
		Resource(lw.src.Resource.Resource).
		VersionedParams(&opts, metav1.ParameterCodec).
		MaxRetries(0) // the reflector owns retries
	if accept != "" {
		req.SetHeader("Accept", accept)
	}
	return req
}

// itemsOf takes a decoded list apart: its items, each checked to be a T,
// and its metadata. ExtractListWithAlloc copies each item out of the
// list's backing array, so keeping one object does not keep the whole
// list's memory alive.
func itemsOf[T informer.Object](list runtime.Object) ([]T, metav1.ListMeta, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, metav1.ListMeta{}, fmt.Errorf("%w: %T is not a list: %v", ErrUnexpectedObject, list, err)
	}
	objs, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return nil, metav1.ListMeta{}, fmt.Errorf("%w: items of %T: %v", ErrUnexpectedObject, list, err)
	}
	items := make([]T, 0, len(objs))
	for i, o := range objs {
		t, ok := o.(T)
		if !ok || informer.IsNil(t) {
			var want T
			return nil, metav1.ListMeta{}, fmt.Errorf("%w: list item %d is %T, want %T", ErrUnexpectedObject, i, o, want)
		}
		items = append(items, t)
	}
	return items, metav1.ListMeta{
		ResourceVersion:    lm.GetResourceVersion(),
		Continue:           lm.GetContinue(),
		RemainingItemCount: lm.GetRemainingItemCount(),
	}, nil
}
