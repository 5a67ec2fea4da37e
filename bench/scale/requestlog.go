package scale

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
)

// RequestLog remembers the request that carried an informer's initial
// list of one resource, every namespace: a LIST, or a WATCH that sends
// the initial events. A reader of a record sees from it what each
// library asked for (URL, Accept) and what the apiserver answered
// (Content-Type, and whether the body came gzipped). Give Wrap to
// rest.Config.Wrap before any client is built.
type RequestLog struct {
	// Resource is the shape whose list is logged: a core/v1 resource
	// ("configmaps") or Widgets, listed in every namespace.
	Resource string

	mu              sync.Mutex
	request, answer string
}

// Wrap returns rt, logging the first list request that succeeds.
func (l *RequestLog) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		q := req.URL.Query()
		if err == nil && req.URL.Path == collectionPath(l.Resource) && (q.Get("watch") != "true" || q.Get("sendInitialEvents") == "true") {
			l.mu.Lock()
			if l.request == "" {
				l.request = fmt.Sprintf("GET %s (Accept: %s)", uriOf(req.URL.Path, q), req.Header.Get("Accept"))
				encoding := "identity"
				if resp.Uncompressed { // Go asked for gzip, and unzipped the answer on the way
					encoding = "gzip"
				}
				l.answer = fmt.Sprintf("%s, %s", resp.Header.Get("Content-Type"), encoding)
			}
			l.mu.Unlock()
		}
		return resp, err
	})
}

// List is the logged request ("GET URL (Accept: …)") and the answer's
// Content-Type and encoding; both "" if none was seen.
func (l *RequestLog) List() (request, answer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.request, l.answer
}

// uriOf is path?query, the query's keys sorted, with a watch's timeouts
// (drawn at random: client-go waits 5 to 10 minutes) written as N, so
// that equal requests read equal.
func uriOf(path string, q url.Values) string {
	for _, timeout := range []string{"timeout", "timeoutSeconds"} {
		if q.Has(timeout) {
			q.Set(timeout, "N")
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
