package reflector

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A message's fields end within it: a list message whose length ends
// after its last item's tag (so the item's length is read from the bytes
// after the list) is a garbled answer, an error as it is to
// apimachinery's decoder, not a list read on past its own end.
func TestAProtobufFieldThatRunsPastItsMessageIsAnError(t *testing.T) {
	good := configMapList(2)
	meta, err := good.ListMeta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), meta)
	for i := range good.Items {
		item, err := good.Items[i].Marshal()
		if err != nil {
			t.Fatal(err)
		}
		raw = protowire.AppendBytes(protowire.AppendTag(raw, 2, protowire.BytesType), item)
	}
	item1, err := good.Items[1].Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The list claims to end after its second item's tag: the item's
	// length and bytes come after it.
	claimed := len(raw) - len(item1) - protowire.SizeVarint(uint64(len(item1)))
	typeMeta := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("v1"))
	typeMeta = protowire.AppendBytes(protowire.AppendTag(typeMeta, 2, protowire.BytesType), []byte("ConfigMapList"))
	body := protowire.AppendBytes(protowire.AppendTag(bytes.Clone(protobufPrefix), 1, protowire.BytesType), typeMeta)
	body = protowire.AppendVarint(protowire.AppendTag(body, 2, protowire.BytesType), uint64(claimed))
	body = append(body, raw...)

	var got []*corev1.ConfigMap
	lm, err := decodeProtobufList(bytes.NewReader(body), metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, func(part []*corev1.ConfigMap) error {
		got = append(got, part...)
		return nil
	})
	if err == nil {
		t.Fatalf("a list whose last item runs past the list's end decoded as a complete list of %d object(s) at resourceVersion %q", len(got), lm.ResourceVersion)
	}
	t.Logf("refused: %v", err)
}
