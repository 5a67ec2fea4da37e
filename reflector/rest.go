package reflector

import (
	"bufio"
	"bytes"
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// listType is the kind and apiVersion a LIST must answer, such as
	// ConfigMapList in v1; an empty kind (unstructured) accepts a list of
	// any kind.
	listType metav1.TypeMeta
	// jsonItem decodes one item of a JSON LIST answer.
	jsonItem jsonItemDecoder[T]
	// cborItem, when set, decodes one item of a CBOR LIST answer: CBOR was
	// asked for (Source.CBOR, unstructured objects only).
	cborItem cborItemDecoder[T]
	// protobuf is set for a Go type read as protobuf.
	protobuf bool
	// listAccept and watchAccept, when set, replace the Accept header: the
	// metadata-only mode asks for a server-side transformation with them.
	listAccept, watchAccept string
	// mode is "unstructured" or "metadata only", "" for a Go type.
	mode string
}

// List implements ListerWatcher: one GET of one page, read as
// ListInParts reads it, the parts gathered.
func (lw *RESTListerWatcher[T]) List(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error) {
	var all []T
	meta, err := lw.ListInParts(ctx, opts, func(part []T) error {
		all = append(all, part...)
		return nil
	})
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	return all, meta, nil
}

// ListInParts implements PartLister: one GET of one page, whose answer
// is decoded as it arrives and handed to part a batch of items at a time,
// so that a large page never sits in memory whole: protobuf by
// decodeProtobufList, CBOR by decodeCBORList, JSON by decodeJSONList,
// told apart by the body's first bytes: protobuf's "k8s\x00", CBOR's
// tag 55799 (kube-apiserver writes it first), else JSON. (The API
// machinery's decoder would need the whole body first, then build a list
// holding every object, and, when the body is of another kind than
// asked, return no error from rest's Result.Into and leave the list
// empty.) The encoding told goes to the reflector's KindList trace event
// (noteAnswered).
func (lw *RESTListerWatcher[T]) ListInParts(ctx context.Context, opts metav1.ListOptions, part func([]T) error) (metav1.ListMeta, error) {
	body, err := lw.request(opts, lw.listAccept).Stream(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	defer body.Close()
	br := bufio.NewReaderSize(readErrors{body}, 64<<10)
	start, err := br.Peek(len(protobufPrefix))
	if failed := readFailure(err); failed != nil {
		return metav1.ListMeta{}, failed // cut before 4 bytes arrived
	}
	if bytes.Equal(start, protobufPrefix) {
		noteAnswered(ctx, "protobuf")
		if !lw.protobuf {
			return metav1.ListMeta{}, fmt.Errorf("%w: the LIST answered protobuf, and JSON was asked for", ErrUnexpectedObject)
		}
		return decodeProtobufList(br, lw.listType, part)
	}
	if bytes.HasPrefix(start, selfDescribedCBOR) {
		noteAnswered(ctx, "CBOR")
		if lw.cborItem == nil {
			return metav1.ListMeta{}, fmt.Errorf("%w: the LIST answered CBOR, which was not asked for", ErrUnexpectedObject)
		}
		return decodeCBORList(br, lw.listType, lw.cborItem, part)
	}
	// JSON: asked for, or the answer of a server or proxy that cannot
	// speak protobuf or CBOR.
	noteAnswered(ctx, "JSON")
	return decodeJSONList(br, lw.listType, lw.jsonItem, part)
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
