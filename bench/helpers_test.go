package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/bench/scale"
)

// full reports whether BENCH_FULL=1 asks for the large sizes.
func full() bool { return os.Getenv("BENCH_FULL") == "1" }

// sizes returns short, plus large when BENCH_FULL=1.
func sizes(short []int, large ...int) []int {
	if full() {
		return append(append([]int{}, short...), large...)
	}
	return short
}

// count formats 1000 as 1k and 1000000 as 1M, for benchmark names.
func count(n int) string { return scale.Count(n) }

const (
	ours     = "impl=ours"
	clientgo = "impl=clientgo"
)

// configMap is a small object: the size of most objects a controller
// watches, and cheap enough to hold 160k of.
func configMap(ns string, i int, rv int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ns,
			Name:            "cm-" + strconv.Itoa(i),
			ResourceVersion: strconv.Itoa(rv),
			Labels:          map[string]string{"app": "app-" + strconv.Itoa(i%100)},
		},
		Data: map[string]string{"key": "value"},
	}
}

// pod is a realistic Pod: labels, annotations, owner, two containers with
// env, ports, probes and resources, status, and managedFields from two
// managers, as a Deployment's Pods carry them.
func pod(i int) *corev1.Pod {
	name := fmt.Sprintf("web-7d9c8b6f5-%05d", i)
	fields := apiruntime.RawExtension{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"8a3c\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{}}}}}`)}
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	container := func(n string) corev1.Container {
		return corev1.Container{
			Name:  n,
			Image: "registry.example.com/team/" + n + ":v1.2.3",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{
				{Name: "LOG_LEVEL", Value: "info"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}, PeriodSeconds: 10},
		}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         "ns-" + strconv.Itoa(i%10),
			Name:              name,
			UID:               types.UID("uid-" + name),
			ResourceVersion:   strconv.Itoa(1000 + i),
			CreationTimestamp: now,
			Labels:            map[string]string{"app": "web", "pod-template-hash": "7d9c8b6f5", "tier": "frontend"},
			Annotations:       map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z", "prometheus.io/scrape": "true"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9c8b6f5", UID: "8a3c"}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields.Raw}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields.Raw}, Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{container("web"), container("sidecar")},
			NodeName:   "node-" + strconv.Itoa(i%50),
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      fmt.Sprintf("10.0.%d.%d", i/250%250, i%250),
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		},
	}
}

// codecsScheme knows core/v1.
var codecsScheme = func() *apiruntime.Scheme {
	scheme := apiruntime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
	return scheme
}()

// codecs decodes core/v1 in JSON and protobuf, as a REST client would.
var codecs = serializer.NewCodecFactory(codecsScheme)

// encode encodes list as JSON or protobuf.
func encode(list apiruntime.Object, protobuf bool) []byte {
	mediaType := apiruntime.ContentTypeJSON
	if protobuf {
		mediaType = apiruntime.ContentTypeProtobuf
	}
	info, ok := apiruntime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		panic("no serializer for " + mediaType)
	}
	data, err := apiruntime.Encode(codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), list)
	if err != nil {
		panic(err)
	}
	return data
}

// decodeList decodes a pre-encoded list, as a REST client does with a LIST
// response body.
func decodeList(data []byte) (apiruntime.Object, error) {
	return apiruntime.Decode(codecs.UniversalDeserializer(), data)
}

// decodeItems decodes a pre-encoded list into one allocation per item
// (meta.ExtractListWithAlloc, what client-go's reflector does too), so no
// cached item pins the whole list.
func decodeItems[T apiruntime.Object](data []byte) ([]T, metav1.ListMeta, error) {
	obj, err := decodeList(data)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	items, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = it.(T)
	}
	return out, metav1.ListMeta{ResourceVersion: lm.GetResourceVersion()}, nil
}

// fakeSource is one in-process collection that feeds both libraries the
// same way: List decodes pre-encoded bytes (or returns nothing), and each
// Watch is a channel the benchmark writes events to.
type fakeSource struct {
	list    func() []byte           // the encoded LIST response
	watches chan *watch.FakeWatcher // every watch opened, in order
}

func newFakeSource(list func() []byte) *fakeSource {
	return &fakeSource{list: list, watches: make(chan *watch.FakeWatcher, 1024)}
}

func (s *fakeSource) openWatch() watch.Interface {
	w := watch.NewFakeWithChanSize(1024, false)
	s.watches <- w
	return w
}

// oursLW is the fakeSource as this module's reflector.ListerWatcher.
type oursLW[T apiruntime.Object] struct{ *fakeSource }

func (lw oursLW[T]) List(_ context.Context, _ metav1.ListOptions) ([]T, metav1.ListMeta, error) {
	return decodeItems[T](lw.list())
}

func (lw oursLW[T]) Watch(_ context.Context, _ metav1.ListOptions) (watch.Interface, error) {
	return lw.openWatch(), nil
}

// clientGoLW is the fakeSource as client-go's ListerWatcher. It declares
// that it does not support streaming lists, as client-go's own fakes do;
// client-go's reflector then LISTs, like ours.
type clientGoLW struct {
	*cache.ListWatch
}

func (clientGoLW) IsWatchListSemanticsUnSupported() bool { return true }

func newClientGoLW(s *fakeSource) clientGoLW {
	return clientGoLW{&cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, _ metav1.ListOptions) (apiruntime.Object, error) {
			return decodeList(s.list())
		},
		WatchFuncWithContext: func(_ context.Context, _ metav1.ListOptions) (watch.Interface, error) {
			return s.openWatch(), nil
		},
	}}
}

// heapAlloc returns the live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// quietOnError drops the reflectors' expected errors (a watch ended).
func quietOnError(error) {}
