package scale

import (
	"github.com/listwatch/informer/testenv"
)

// widgetsCRD is the CustomResourceDefinition of Widget: namespaced, one
// version, and a structural schema that names spec.payload, so the
// apiserver prunes and validates as it does for a real operator's CRD
// (x-kubernetes-preserve-unknown-fields would skip both, and flatter the
// apiserver's side of every sync). testenv.InstallCRD installs it and
// waits until discovery lists widgets (what our factory's RESTMapper
// reads); testenv.WaitForCRD waits for a CRD that came with a saved etcd.
var widgetsCRD = testenv.CRD{
	Group: WidgetGroupVersion.Group, Version: WidgetGroupVersion.Version,
	Kind: "Widget", Plural: Widgets,
	Schema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{
				"type": "object", "required": []string{"payload"},
				"properties": map[string]any{"payload": map[string]any{"type": "string"}},
			},
		},
	},
}
