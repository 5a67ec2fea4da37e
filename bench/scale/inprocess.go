package scale

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer/reflector"
)

// InProcessSync is the workload of the in-process rows: an initial sync
// from a collection held in memory as encoded LIST pages, so it reaches
// sizes (1M) a 2-core control plane cannot serve. Both libraries page the
// same pages (500 objects, protobuf) and decode every one; no watch event
// follows.
const InProcessSync = "initial sync, in-process"

// InProcessSample is one in-process sync, as a child process reports it.
type InProcessSample struct {
	Seconds       float64 `json:"seconds"`
	HeapPerObject float64 `json:"heapPerObject"`
}

const inProcessPage = 500

// pages encodes n ConfigMaps as LIST pages of inProcessPage, each with
// the continue token of the next ("" on the last).
func pages(n int) ([][]byte, error) {
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return nil, fmt.Errorf("scale: no protobuf serializer")
	}
	enc := codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	var out [][]byte
	for start := 0; start < n; start += inProcessPage {
		list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(n)}}
		for i := start; i < min(start+inProcessPage, n); i++ {
			list.Items = append(list.Items, *WithServerFields(ConfigMap(i), i+1))
		}
		if end := start + inProcessPage; end < n {
			list.Continue = strconv.Itoa(end / inProcessPage)
		}
		data, err := runtime.Encode(enc, list)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// pageSource serves the encoded pages to either library.
type pageSource struct{ pages [][]byte }

// page decodes the page a continue token names, into one allocation per
// item (meta.ExtractListWithAlloc, as both reflectors do), so no cached
// object pins its page.
func (p pageSource) page(token string) (*corev1.ConfigMapList, error) {
	i := 0
	if token != "" {
		var err error
		if i, err = strconv.Atoi(token); err != nil || i < 0 || i >= len(p.pages) {
			return nil, fmt.Errorf("scale: bad continue token %q", token)
		}
	}
	obj, err := runtime.Decode(codecs.UniversalDeserializer(), p.pages[i])
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.ConfigMapList), nil
}

// List is our reflector.ListerWatcher's List.
func (p pageSource) List(_ context.Context, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	list, err := p.page(opts.Continue)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	out := make([]*corev1.ConfigMap, len(items))
	for i, it := range items {
		out[i] = it.(*corev1.ConfigMap)
	}
	return out, list.ListMeta, nil
}

// Watch opens a watch that sends nothing until stopped.
func (p pageSource) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// clientGoPages is the source as client-go's ListerWatcher, which cannot
// stream lists.
type clientGoPages struct{ *cache.ListWatch }

func (clientGoPages) IsWatchListSemanticsUnSupported() bool { return true }

func newClientGoPages(p pageSource) clientGoPages {
	return clientGoPages{&cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return p.page(opts.Continue)
		},
		WatchFuncWithContext: p.Watch,
	}}
}

// RunInProcess syncs lib's informer from n in-memory ConfigMaps once and
// measures it. It is what `scale -child` runs, one sync per process, so
// that neither library's heap is measured on top of the other's.
func RunInProcess(ctx context.Context, lib string, n int) (InProcessSample, error) {
	encoded, err := pages(n)
	if err != nil {
		return InProcessSample{}, err
	}
	src := pageSource{encoded}
	var build func() (running, error)
	switch lib {
	case Ours:
		build = func() (running, error) {
			return buildOursFrom[*corev1.ConfigMap](ctx, src, reflector.Tuning{InitialList: reflector.ListConsistent}, nil, nil)
		}
	case ClientGo:
		build = func() (running, error) {
			inf := cache.NewSharedIndexInformer(newClientGoPages(src), &corev1.ConfigMap{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			return clientGoRunning(ctx, inf, nil)
		}
	default:
		return InProcessSample{}, fmt.Errorf("scale: no library %q (want %q or %q)", lib, Ours, ClientGo)
	}
	sample, err := syncOnce(ctx, build, n)
	return InProcessSample{Seconds: sample.seconds, HeapPerObject: sample.heapPerObject}, err
}
