package reflector

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// A protobuf list whose items field (2) comes with a wire type other
// than length-delimited is a garbled answer, an error as apimachinery's
// decoder says ("wrong wireType = 0 for field Items"), never a list one
// object short, which taken as complete would delete that object from
// the cache. (Found by a bug hunt: the item was skipped.)
func TestAProtobufItemOfTheWrongWireTypeIsAnErrorNotAShorterList(t *testing.T) {
	good := configMapList(2)
	item0, err := good.Items[0].Marshal()
	if err != nil {
		t.Fatal(err)
	}
	meta, err := good.ListMeta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), meta)
	raw = protowire.AppendBytes(protowire.AppendTag(raw, 2, protowire.BytesType), item0)
	raw = protowire.AppendVarint(protowire.AppendTag(raw, 2, protowire.VarintType), 7) // the second item, garbled
	typeMeta := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("v1"))
	typeMeta = protowire.AppendBytes(protowire.AppendTag(typeMeta, 2, protowire.BytesType), []byte("ConfigMapList"))
	body := protowire.AppendBytes(protowire.AppendTag(bytes.Clone(protobufPrefix), 1, protowire.BytesType), typeMeta)
	body = protowire.AppendBytes(protowire.AppendTag(body, 2, protowire.BytesType), raw)

	// The API machinery refuses it.
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	_, _, apimErr := protobuf.NewSerializer(scheme, scheme).Decode(body, nil, &corev1.ConfigMapList{})
	t.Logf("the API machinery's decoder: %v", apimErr)

	var got []*corev1.ConfigMap
	lm, err := decodeProtobufList(bytes.NewReader(body), metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, func(part []*corev1.ConfigMap) error {
		got = append(got, part...)
		return nil
	})
	if err == nil {
		t.Fatalf("a list with a garbled item decoded as a complete list of %d object(s) at resourceVersion %q (the API machinery: %v)", len(got), lm.ResourceVersion, apimErr)
	}
}
