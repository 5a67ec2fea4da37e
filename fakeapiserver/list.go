package fakeapiserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// list answers one LIST page as kube-apiserver reading from etcd (watch
// cache off) does:
//
//   - resourceVersion "" or "0", or N with resourceVersionMatch
//     NotOlderThan or with neither match nor limit: the latest state
//     (at least as new as N; an N newer than the latest write answers 504
//     "Too large resource version").
//   - resourceVersionMatch Exact, or N with a limit and no match (etcd's
//     legacy paged read): the state at N, or 410 Gone if compacted.
//   - limit: at most limit objects in key order, and a continue token
//     when more follow, with remainingItemCount. Every page of one list
//     shows one state, the first page's.
//   - continue: the next page of that state; 410 Gone (reason Expired)
//     once compacted, with a token to go on from the latest state.
//
// Selectors filter what is shown; a page holds up to limit matching
// objects. (A real one with selectors may hold fewer; the client sees
// the same list.)
func (s *Server) list(res Resource, f filter, opts metav1.ListOptions) ([]*unstructured.Unstructured, metav1.ListMeta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServedLocked(res); err != nil {
		return nil, metav1.ListMeta{}, err
	}
	at, after, err := s.listPositionLocked(opts)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	state := s.stateAtLocked(res.GroupResource(), at)
	var items []*unstructured.Unstructured
	var next string
	remaining := int64(0)
	for _, key := range sortedKeys(state) {
		if after != "" && key.String() <= after {
			continue
		}
		obj := state[key]
		if !f.matches(obj) {
			continue
		}
		if next != "" {
			remaining++
			continue
		}
		if opts.Limit > 0 && int64(len(items)) == opts.Limit {
			next = continueToken(at, items[len(items)-1])
			remaining++
			continue
		}
		items = append(items, obj) // stored objects are never modified in place
	}
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatInt(at, 10), Continue: next}
	if next != "" && f.labels.Empty() && f.fields.Empty() {
		lm.RemainingItemCount = &remaining
	}
	return items, lm, nil
}

// listPositionLocked decides which state a LIST shows (resourceVersion
// at) and after which key it starts ("" for the first page).
func (s *Server) listPositionLocked(opts metav1.ListOptions) (at int64, after string, err error) {
	if opts.Continue != "" {
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return 0, "", apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		at, after, err = parseContinue(opts.Continue)
		if err != nil {
			return 0, "", err
		}
		if at == -1 { // the token of an expired list: go on at the latest state
			return s.rv, after, nil
		}
		if at < s.compactedRV {
			status := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
				"You can start a new list without the continue parameter, or use the continue token in this response to " +
				"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
				"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
			status.ErrStatus.ListMeta.Continue = encodeContinue(-1, after)
			return 0, "", status
		}
		if at > s.rv {
			return 0, "", apierrors.NewBadRequest("continue key is not valid: resourceVersion from the future")
		}
		return at, after, nil
	}
	if opts.ResourceVersion == "" || opts.ResourceVersion == "0" {
		if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
			return 0, "", apierrors.NewBadRequest(`resourceVersionMatch "Exact" is forbidden for resourceVersion "0"`)
		}
		return s.rv, "", nil
	}
	n, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
	if err != nil || n < 0 {
		return 0, "", apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %s", opts.ResourceVersion))
	}
	if n > s.rv {
		return 0, "", tooLargeResourceVersion(n, s.rv)
	}
	exact := opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
		(opts.ResourceVersionMatch == "" && opts.Limit > 0)
	if !exact {
		return s.rv, "", nil
	}
	if n < s.compactedRV {
		return 0, "", apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	}
	return n, "", nil
}

// tooLargeResourceVersion is kube-apiserver's answer to a resourceVersion
// newer than it has seen: 504 with a cause ResourceVersionTooLarge and
// a suggestion to retry.
func tooLargeResourceVersion(asked, latest int64) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", asked, latest), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// continueToken is the token for the page after last, in a list at rv.
func continueToken(rv int64, last *unstructured.Unstructured) string {
	return encodeContinue(rv, objectKey{last.GetNamespace(), last.GetName()}.String())
}

// token is a continue token's content: like kube-apiserver's, base64 of
// JSON naming the list's resourceVersion and the last key served.
// Clients treat it as opaque.
type token struct {
	RV    int64  `json:"rv"`
	Start string `json:"start"`
}

func encodeContinue(rv int64, after string) string {
	b, _ := json.Marshal(token{RV: rv, Start: after})
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseContinue(s string) (rv int64, after string, err error) {
	var t token
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil || t.Start == "" {
		return 0, "", apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: %q", s))
	}
	return t.RV, t.Start, nil
}
