package expectations_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/expectations"
)

func TestRefusedIsA4xxThatNeverStoredTheObject(t *testing.T) {
	cms := schema.GroupResource{Resource: "configmaps"}
	for _, c := range []struct {
		name    string
		err     error
		refused bool
	}{
		{"no error", nil, false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "web", nil), true},
		{"forbidden", apierrors.NewForbidden(cms, "web", errors.New("no")), true},
		{"quota exceeded", apierrors.NewForbidden(cms, "web", errors.New("exceeded quota")), true},
		{"namespace not found", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "demo"), true},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), true},
		{"the name taken", apierrors.NewAlreadyExists(cms, "web"), false},
		{"a timeout (504)", apierrors.NewTimeoutError("etcd was slow", 0), false},
		{"a request timeout (408)", apierrors.NewGenericServerResponse(408, "POST", cms, "web", "", 0, true), false},
		{"a server timeout (500)", apierrors.NewServerTimeout(cms, "create", 1), false},
		{"an internal error", apierrors.NewInternalError(errors.New("boom")), false},
		{"no answer", context.DeadlineExceeded, false},
	} {
		assert.Equal(t, c.refused, expectations.Refused(c.err), c.name)
	}
}
