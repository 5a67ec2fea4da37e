package fakeapiserver

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A generated name that is taken is generated again, as kube-apiserver
// generates it again on a conflict, up to maxGenerateAttempts times;
// every suffix is from nameAlphabet. (The conformance test cannot take
// the real server's random names in advance; this one takes the fake's.)
func TestAGeneratedNameThatIsTakenIsGeneratedAgain(t *testing.T) {
	s := New()
	cms := s.resources[schema.GroupResource{Resource: "configmaps"}]
	configMap := func(name, generateName string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("default")
		u.SetName(name)
		u.SetGenerateName(generateName)
		return u
	}
	// The next maxGenerateAttempts-1 names the fake would generate, taken.
	for i := 1; i < maxGenerateAttempts; i++ {
		if _, err := s.create(cms, configMap("g-"+nameSuffix(s.names+i), "")); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := s.create(cms, configMap("", "g-"))
	if err != nil {
		t.Fatalf("generateName beside %d taken names: %v", maxGenerateAttempts-1, err)
	}
	name := obj.GetName()
	if len(s.Objects(cms.GroupVersionResource)) != maxGenerateAttempts || strings.Trim(strings.TrimPrefix(name, "g-"), nameAlphabet) != "" {
		t.Errorf("generated %q beside %d objects", name, len(s.Objects(cms.GroupVersionResource)))
	}
}
