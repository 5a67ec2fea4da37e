package fakeapiserver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The metadata-only form in protobuf, as client-go's metadata client asks
// for it (protobuf first, JSON after): a list, a get and a watch of col,
// which holds at least object "a", and a delete of its object doomed.
// The answers are described by their status, content type and the kind
// inside the protobuf envelope.
func metadataInProtobuf(ctx context.Context, t *testing.T, tg *target, rec *recorder, col, doomed string) {
	t.Helper()
	const (
		list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
		one  = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	)
	code, ct, body := tg.doRaw(ctx, t, "GET", col, list, nil)
	rec.add("list metadata only, protobuf first: %d %s %s", code, ct, protobufKind(body))
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"?limit=1", one, nil)
	rec.add("list metadata only, asking the object's form: %d %s %s", code, ct, protobufKind(body))
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"/a", list, nil)
	rec.add("get metadata only, asking the list's form: %d %s %s", code, ct, protobufKind(body))
	code, ct, body = tg.doRaw(ctx, t, "DELETE", col+"/"+doomed, one, nil)
	rec.add("delete asking metadata only, protobuf first: %d %s %s", code, ct, protobufKind(body))
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"/missing", one, nil)
	rec.add("get missing metadata only, protobuf first: %d %s %s", code, ct, protobufKind(body))
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"/missing", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", nil)
	rec.add("get missing metadata only, protobuf alone: %d %s %s", code, ct, protobufKind(body))
	// Watches that end on their own after a second, read whole.
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"?watch=true&resourceVersion=0&timeoutSeconds=1", one, nil)
	rec.add("watch metadata only, protobuf first: %d %s first event %s", code, ct, firstProtobufEvent(body))
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"?watch=true&resourceVersion=0&timeoutSeconds=1", list, nil)
	rec.add("watch metadata only, asking the list's form: %d %s first event %s", code, ct, firstProtobufEvent(body))
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"?limit=1", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", nil)
	rec.add("list metadata only, protobuf alone: %d %s %s", code, ct, protobufKind(body))
}

// protobufKind is the apiVersion and kind in a protobuf answer's
// envelope, or "not protobuf".
func protobufKind(body []byte) string {
	raw, ok := bytes.CutPrefix(body, []byte("k8s\x00"))
	if !ok {
		return "not protobuf"
	}
	var u runtime.Unknown
	if err := u.Unmarshal(raw); err != nil {
		return "bad protobuf: " + err.Error()
	}
	return u.APIVersion + "/" + u.Kind
}

// firstProtobufEvent describes the first frame of a protobuf watch
// stream: its type and the kind of its object.
func firstProtobufEvent(body []byte) string {
	if len(body) < 4 {
		return fmt.Sprintf("none (%d bytes)", len(body))
	}
	n := binary.BigEndian.Uint32(body)
	if uint32(len(body)-4) < n {
		return "not a protobuf frame"
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(body[4 : 4+n]); err != nil {
		return "bad frame: " + err.Error()
	}
	return ev.Type + " " + protobufKind(ev.Object.Raw)
}
