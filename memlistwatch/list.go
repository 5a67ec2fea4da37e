package memlistwatch

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

// List answers one LIST page the way kube-apiserver does:
//
//   - resourceVersion "" or "0": the latest state. (A real "0" may be served
//     from a stale cache; this collection has no cache.)
//   - resourceVersion N, resourceVersionMatch NotOlderThan, or unset
//     without a limit: the latest state, which is at least as new as N. An N
//     newer than the latest write answers "Too large resource version" (504).
//   - resourceVersionMatch Exact, or unset with a limit (etcd's legacy paged
//     read): the state at N, or 410 Gone if compacted.
//   - limit: at most limit objects, in key order, and a continue token when
//     more follow. The token pins the page's resourceVersion, so all pages of
//     one list show one state, however the collection changes meanwhile.
//   - continue: the next page of that state, or 410 Gone if it has been
//     compacted away. resourceVersion must be unset or "0" with a continue
//     token.
//
// Objects are copies; the caller may keep and modify them. Selectors are not
// supported and answer 400. While disconnected (see Disconnect), List waits.
func (lw *ListerWatcher[T]) List(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error) {
	if err := lw.waitConnected(ctx); err != nil {
		return nil, metav1.ListMeta{}, err
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.stats.Lists++
	if err := noSelectors(opts); err != nil {
		return nil, metav1.ListMeta{}, err
	}
	at, after, err := lw.listPosition(opts)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	state := lw.stateAt(at)
	var items []T
	var next string
	for _, key := range sortedKeys(state) {
		if after != "" && key.String() <= after {
			continue
		}
		if opts.Limit > 0 && int64(len(items)) == opts.Limit {
			next = continueToken(at, items[len(items)-1])
			break
		}
		c, err := deepCopy(state[key])
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		items = append(items, c)
	}
	return items, metav1.ListMeta{ResourceVersion: strconv.FormatInt(at, 10), Continue: next}, nil
}

// listPosition decides which state a LIST shows (the resourceVersion at)
// and after which key it starts ("" for the first page).
func (lw *ListerWatcher[T]) listPosition(opts metav1.ListOptions) (at int64, after string, err error) {
	if opts.Continue != "" {
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return 0, "", apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		at, after, err = parseContinue(opts.Continue)
		if err != nil {
			return 0, "", err
		}
		if at < lw.compactedRV {
			return 0, "", apierrors.NewResourceExpired("the continue token is too old: its list's resourceVersion has been compacted; restart the list")
		}
		if at > lw.rv {
			return 0, "", apierrors.NewBadRequest("invalid continue token: resourceVersion from the future")
		}
		return at, after, nil
	}
	if opts.ResourceVersion == "" || opts.ResourceVersion == "0" {
		return lw.rv, "", nil
	}
	n, err := lw.parseRV(opts.ResourceVersion)
	if err != nil {
		return 0, "", err
	}
	// Exact, or the legacy case kube-apiserver keeps for a paged list: no
	// match given, a limit, and resourceVersion N reads exactly at N.
	exact := opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
		(opts.ResourceVersionMatch == "" && opts.Limit > 0)
	if exact {
		if n < lw.compactedRV {
			return 0, "", apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", n, lw.compactedRV))
		}
		return n, "", nil
	}
	return lw.rv, "", nil
}

// parseRV parses a resourceVersion the client sent; one newer than the
// latest write answers as kube-apiserver does when asked for the future.
func (lw *ListerWatcher[T]) parseRV(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", s))
	}
	if n > lw.rv {
		return 0, tooLargeResourceVersion(n, lw.rv)
	}
	return n, nil
}

// tooLargeResourceVersion is the error kube-apiserver answers when asked
// for a resourceVersion newer than it has seen: 504 with a cause of type
// ResourceVersionTooLarge, and a suggestion to retry in a second.
func tooLargeResourceVersion(asked, latest int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", asked, latest), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// continueToken encodes where the next page starts: the list's
// resourceVersion and the last key served, "5/default/b". Clients must
// treat it as opaque; it is readable here only to teach.
func continueToken[T informer.Object](rv int64, last T) string {
	return strconv.FormatInt(rv, 10) + "/" + informer.Key{Namespace: last.GetNamespace(), Name: last.GetName()}.String()
}

func parseContinue(token string) (rv int64, after string, err error) {
	rvText, after, ok := strings.Cut(token, "/")
	rv, perr := strconv.ParseInt(rvText, 10, 64)
	if !ok || perr != nil || after == "" {
		return 0, "", apierrors.NewBadRequest(fmt.Sprintf("invalid continue token %q", token))
	}
	return rv, after, nil
}

// noSelectors rejects what this collection cannot do: filter. A silent
// "everything" would make a test pass for the wrong reason.
func noSelectors(opts metav1.ListOptions) error {
	if opts.LabelSelector != "" || opts.FieldSelector != "" {
		return apierrors.NewBadRequest("memlistwatch does not support label or field selectors")
	}
	return nil
}
