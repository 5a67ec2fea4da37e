package fakeapiserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Discovery is served in its legacy form (APIVersions, APIGroupList,
// APIResourceList, JSON only): client-go's discovery client asks for the
// aggregated form first and falls back to this one when the answer is
// plain JSON.

// verbs are what every served resource allows, as discovery says it.
var verbs = metav1.Verbs{"create", "delete", "get", "list", "update", "watch"}

func (s *Server) serveVersion(w http.ResponseWriter) {
	writeJSON(w, version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.2", Platform: "fake/fakeapiserver"})
}

func (s *Server) serveCoreVersions(w http.ResponseWriter) {
	v := metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: "fakeapiserver"}}}
	writeJSON(w, v)
}

// groups returns the named groups served now and their versions, in
// name order. s.mu must not be held.
func (s *Server) groups() []metav1.APIGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string]*metav1.APIGroup{}
	for _, r := range s.resources {
		if r.Group == "" {
			continue
		}
		g := byName[r.Group]
		if g == nil {
			g = &metav1.APIGroup{Name: r.Group}
			byName[r.Group] = g
		}
		gv := metav1.GroupVersionForDiscovery{GroupVersion: r.GroupVersion().String(), Version: r.Version}
		if !slices.Contains(g.Versions, gv) {
			g.Versions = append(g.Versions, gv)
		}
	}
	var out []metav1.APIGroup
	for _, g := range byName {
		slices.SortFunc(g.Versions, func(a, b metav1.GroupVersionForDiscovery) int { return strings.Compare(a.Version, b.Version) })
		g.PreferredVersion = g.Versions[0]
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b metav1.APIGroup) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (s *Server) serveGroups(w http.ResponseWriter) {
	writeJSON(w, metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: s.groups()})
}

func (s *Server) serveGroup(w http.ResponseWriter, name string) {
	for _, g := range s.groups() {
		if g.Name == name {
			g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			writeJSON(w, g)
			return
		}
	}
	notFound(w)
}

// serveResources answers /api/v1 or /apis/<group>/<version>: the
// resources served there now, or 404 when there are none.
func (s *Server) serveResources(w http.ResponseWriter, gv schema.GroupVersion) {
	s.mu.Lock()
	var list []metav1.APIResource
	for _, r := range s.resources {
		if r.GroupVersion() == gv {
			list = append(list, metav1.APIResource{
				Name: r.Resource, SingularName: strings.ToLower(r.Kind), Namespaced: r.Namespaced,
				Kind: r.Kind, Verbs: verbs,
			})
		}
	}
	s.mu.Unlock()
	if len(list) == 0 {
		notFound(w)
		return
	}
	slices.SortFunc(list, func(a, b metav1.APIResource) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(), APIResources: list})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, format{}, err)
		return
	}
	writeBody(w, http.StatusOK, mediaJSON, b)
}
