package reflector

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkProtobufList decodes a protobuf LIST answer of 10,000
// ConfigMaps of about 1 KiB each, in parts, as a reflector reads a
// built-in type's list: the path of chapter 17's initial sync.
func BenchmarkProtobufList(b *testing.B) {
	list := configMapList(10_000)
	for i := range list.Items {
		list.Items[i].Data["payload"] = strings.Repeat("x", 1024)
	}
	body := encodeList(b, list)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		n := 0
		_, err := decodeProtobufList(bytes.NewReader(body), metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, func(part []*corev1.ConfigMap) error {
			n += len(part)
			return nil
		})
		require.NoError(b, err)
		require.Equal(b, 10_000, n)
	}
}
