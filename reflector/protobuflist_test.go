package reflector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// encodeList encodes list as the API server does in protobuf; like the
// server, the caller sets its kind.
func encodeList(t testing.TB, list runtime.Object) []byte {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	var buf bytes.Buffer
	require.NoError(t, protobuf.NewSerializer(scheme, scheme).Encode(list, &buf))
	return buf.Bytes()
}

func configMapList(n int) *corev1.ConfigMapList {
	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next", RemainingItemCount: new(int64(7))}}
	for i := range n {
		list.Items = append(list.Items, corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%3), Name: fmt.Sprintf("cm-%d", i), ResourceVersion: fmt.Sprint(i + 1),
				Labels: map[string]string{"app": "web"}},
			Data: map[string]string{"k": fmt.Sprint(i)},
		})
	}
	return list
}

func TestAProtobufListIsDecodedItemByItemIntoObjectsOfItsOwn(t *testing.T) {
	for _, n := range []int{0, 1, 5000} { // none, one, and several batches, for several goroutines
		list := configMapList(n)
		items, meta, err := decodeAll(bytes.NewReader(encodeList(t, list)), "ConfigMapList")
		require.NoError(t, err)
		assert.Equal(t, metav1.ListMeta{ResourceVersion: "42", Continue: "next", RemainingItemCount: new(int64(7))}, meta)
		require.Len(t, items, n)
		for i, item := range items {
			assert.Equal(t, &list.Items[i], item, "item %d, in order", i)
		}
	}
}

func TestAProtobufListIsHandedOverInPartsAsItIsDecoded(t *testing.T) {
	list := configMapList(20_000) // about 1.2 MB: five batches
	body := encodeList(t, list)
	parts, seen := 0, 0
	_, err := decodeProtobufList(bytes.NewReader(body), cmListType, func(part []*corev1.ConfigMap) error {
		for _, item := range part {
			require.Equal(t, list.Items[seen].Name, item.Name, "parts arrive in list order")
			seen++
		}
		parts++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 20_000, seen)
	assert.Greater(t, parts, 3, "a list of %d bytes comes in batches of %d", len(body), batchBytes)
}

// Small objects (metadata only, in protobuf) fill 256 KiB by the
// thousand: a batch is cut at batchItems too, so few of them wait decoded
// beside the objects the cache still holds.
func TestAListOfSmallObjectsIsHandedOverAtMostBatchItemsAtATime(t *testing.T) {
	list := configMapList(3000) // about 60 bytes an item: one batch by bytes
	body := encodeList(t, list)
	require.Less(t, len(body), batchBytes)
	var sizes []int
	_, err := decodeProtobufList(bytes.NewReader(body), cmListType, func(part []*corev1.ConfigMap) error {
		sizes = append(sizes, len(part))
		return nil
	})
	require.NoError(t, err)
	for i, n := range sizes {
		assert.LessOrEqual(t, n, batchItems, "part %d", i)
	}
	assert.Len(t, sizes, (3000+batchItems-1)/batchItems)
}

// A list cut in the item after a full batch leaves that item's batch
// empty: it is dropped, not handed over (the reflector would hold the
// list back for it, and hand the cache an empty part).
func TestAListCutAfterAFullBatchHandsOverNoEmptyPart(t *testing.T) {
	body := encodeList(t, configMapList(batchItems+1))
	var sizes []int
	_, err := decodeProtobufList(bytes.NewReader(body[:len(body)-10]), cmListType, func(part []*corev1.ConfigMap) error {
		sizes = append(sizes, len(part))
		return nil
	})
	require.Error(t, err)
	assert.Equal(t, []int{batchItems}, sizes)
}

func TestAPartRefusedStopsTheListWithTheRefusal(t *testing.T) {
	refusal := errors.New("the store is closed")
	parts := 0
	_, err := decodeProtobufList(bytes.NewReader(encodeList(t, configMapList(20_000))), cmListType, func([]*corev1.ConfigMap) error {
		parts++
		return refusal
	})
	assert.Same(t, refusal, err, "returned as it is")
	assert.Equal(t, 1, parts, "nothing is handed over after a refusal")
}

func TestAProtobufAnswerThatIsNotTheListAskedForIsAnError(t *testing.T) {
	good := encodeList(t, configMapList(3))
	for name, c := range map[string]struct {
		body []byte
		want error
	}{
		"another kind":    {encodeList(t, &corev1.SecretList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}}), ErrUnexpectedObject},
		"no prefix":       {good[4:], errNotAProtobufList},
		"cut short":       {good[:len(good)-5], errNotAProtobufList},
		"empty":           {nil, errNotAProtobufList},
		"only the prefix": {protobufPrefix, errNotAProtobufList},
		"a garbled item":  {listBody("ConfigMapList", []byte{0x00}), ErrUnexpectedObject}, // field number 0: no message has one
		"another apiVersion": {func() []byte {
			other := configMapList(1)
			other.APIVersion = "example.com/v9"
			return encodeList(t, other)
		}(), ErrUnexpectedObject},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := decodeAll(bytes.NewReader(c.body), "ConfigMapList")
			assert.ErrorIs(t, err, c.want)
		})
	}
}

// listBody builds a protobuf list answer of kind in v1 by hand, around
// items given as raw bytes.
func listBody(kind string, items ...[]byte) []byte {
	typeMeta := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("v1"))
	typeMeta = protowire.AppendBytes(protowire.AppendTag(typeMeta, 2, protowire.BytesType), []byte(kind))
	var raw []byte
	for _, item := range items {
		raw = protowire.AppendBytes(protowire.AppendTag(raw, 2, protowire.BytesType), item)
	}
	unknown := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), typeMeta)
	unknown = protowire.AppendBytes(protowire.AppendTag(unknown, 2, protowire.BytesType), raw)
	return append(bytes.Clone(protobufPrefix), unknown...)
}

// A hostile body never panics the decoder: it is decoded or refused.
func FuzzDecodeProtobufList(f *testing.F) {
	f.Add(encodeList(f, configMapList(2)))
	f.Add(encodeList(f, &corev1.SecretList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}}))
	f.Add([]byte("k8s\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, _, err := decodeAll(bytes.NewReader(body), "ConfigMapList")
		if err == nil {
			for _, item := range items {
				assert.NotNil(t, item)
			}
		}
	})
}

// decodeAll decodes a protobuf ConfigMapList body into one slice.
func decodeAll(body io.Reader, kind string) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	var all []*corev1.ConfigMap
	meta, err := decodeProtobufList(body, metav1.TypeMeta{Kind: kind, APIVersion: "v1"}, func(part []*corev1.ConfigMap) error {
		all = append(all, part...)
		return nil
	})
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	return all, meta, nil
}
