package scale

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The three object shapes of the ladder.
const (
	// ConfigMaps are ~1 KiB ConfigMaps: two labels and one 900-byte value,
	// the size of a typical small object a controller caches.
	ConfigMaps = "configmaps"
	// Pods are Deployment-made Pods: two containers, env, probes, owner,
	// status. Deeply nested, so decoding (and protobuf's lead over JSON)
	// matters more than for a flat ConfigMap.
	Pods = "pods"
	// Widgets are custom resources (Widget, served by a CRD) carrying a
	// ConfigMap's labels and payload: the same data, read as JSON, since
	// a custom resource has no protobuf (only its metadata alone may be:
	// PartialMetadata).
	Widgets = "widgets"
)

// RepeatedPayload is the one 900-byte text every ConfigMap of the ladder
// carried before its objects got random data (chapter 17, lesson 5):
// gzip shrinks a list of them to almost nothing, which flattered a
// library that asks for gzip. syncpair -payload repeated still uses it.
var RepeatedPayload = strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_", 15)[:900]

// payload is the i-th ConfigMap's 900-byte value, which makes it ~1 KiB:
// random base32 text from a generator seeded with i, so every run builds
// the same objects, and gzip saves only what base32 wastes (about a
// third), as on real data.
func payload(i int) string {
	const base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	r := rand.New(rand.NewPCG(uint64(i), 900))
	b := make([]byte, 900)
	for k := range b {
		b[k] = base32[r.IntN(len(base32))]
	}
	return string(b)
}

// namespaceOf is the namespace of the i-th object: ns-0 … ns-9.
func namespaceOf(i int) string { return "ns-" + strconv.Itoa(i%spread) }

// ConfigMap is the i-th ~1 KiB ConfigMap, in namespace ns-(i mod 10).
func ConfigMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespaceOf(i),
			Name:      fmt.Sprintf("cm-%07d", i),
			Labels:    map[string]string{"app": "app-" + strconv.Itoa(i%100), "tier": "backend"},
		},
		Data: map[string]string{"payload": payload(i)},
	}
}

// Pod is the i-th Pod of a Deployment, in namespace ns-(i mod 10). It
// has no server-set fields (resourceVersion, UID, managedFields);
// WithServerFields adds them for in-process runs.
func Pod(i int) *corev1.Pod {
	name := fmt.Sprintf("web-7d9c8b6f5-%07d", i)
	container := func(n string, port int32) corev1.Container {
		return corev1.Container{
			Name:  n,
			Image: "registry.example.com/team/" + n + ":v1.2.3",
			Ports: []corev1.ContainerPort{{Name: n, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{
				{Name: "LOG_LEVEL", Value: "info"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port)}}, PeriodSeconds: 10},
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespaceOf(i),
			Name:            name,
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9c8b6f5", "tier": "frontend"},
			Annotations:     map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z", "prometheus.io/scrape": "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9c8b6f5", UID: "8a3c"}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{container("web", 8080), container("sidecar", 9090)},
			NodeName:   "node-" + strconv.Itoa(i%50),
		},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIP:  fmt.Sprintf("10.0.%d.%d", i/250%250, i%250),
			HostIP: fmt.Sprintf("192.168.0.%d", i%50),
		},
	}
}

// WithServerFields sets what the apiserver would on a created object:
// resourceVersion rv, a UID, a creation time and one managedFields entry,
// so in-process objects weigh what listed ones do.
func WithServerFields[T interface {
	metav1.Object
	runtime.Object
}](obj T, rv int) T {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	obj.SetResourceVersion(strconv.Itoa(rv))
	obj.SetUID(types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", rv)))
	obj.SetCreationTimestamp(now)
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: "scale", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}}}`)},
	}})
	return obj
}
