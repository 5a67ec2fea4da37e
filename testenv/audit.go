package testenv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// auditPolicy logs every request at Metadata level: who, which verb, which
// resource, no bodies. ResponseStarted (long-running requests only) is
// left out; each request still logs RequestReceived and ResponseComplete.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["ResponseStarted"]
rules:
- level: Metadata
`

// RequestFilter selects requests in the audit log. An empty field matches
// anything.
type RequestFilter struct {
	Verb      string // as audit logs it: get, list, watch, create, update, patch, delete, ...
	Resource  string // plural resource, e.g. "configmaps"
	Namespace string
	// UserAgent matches a prefix of the request's User-Agent header. Give
	// a client a unique rest.Config.UserAgent to count only its requests
	// and none of the apiserver's own.
	UserAgent string
	// URIContains matches a substring of the request URI, such as
	// "sendInitialEvents=true".
	URIContains string
}

func (f RequestFilter) matches(e auditEvent) bool {
	return (f.Verb == "" || f.Verb == e.Verb) &&
		(f.Resource == "" || f.Resource == e.ObjectRef.Resource) &&
		(f.Namespace == "" || f.Namespace == e.ObjectRef.Namespace) &&
		strings.HasPrefix(e.UserAgent, f.UserAgent) &&
		strings.Contains(e.RequestURI, f.URIContains)
}

// auditEvent is the part of an audit.k8s.io/v1 Event that counting needs.
type auditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	UserAgent  string `json:"userAgent"`
	RequestURI string `json:"requestURI"`
	ObjectRef  struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
	} `json:"objectRef"`
}

// CountRequests counts the requests the apiserver received that match f:
// unique audit IDs at stage RequestReceived. This is the server's own
// count; a count at a proxy cannot give it, because over HTTP/2 one
// connection carries every request.
//
// The log is read until two readings 100ms apart agree, so a request whose
// event is still being written is not missed. It needs Options.Audit.
func (cp *ControlPlane) CountRequests(ctx context.Context, f RequestFilter) (int, error) {
	if !cp.opts.Audit {
		return 0, errors.New("CountRequests needs a control plane started with Options.Audit")
	}
	last := -1
	for {
		n, err := countAudit(cp.api.auditLogPath(), f)
		if err != nil {
			return 0, err
		}
		if n == last {
			return n, nil
		}
		last = n
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("counting requests: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// countAudit reads the audit log once and counts matching requests.
func countAudit(path string, f RequestFilter) (int, error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reading the audit log: %w", err)
	}
	defer file.Close()
	seen := map[string]bool{}
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			continue // the last line may be half-written; the next reading sees it whole
		}
		if e.Stage == "RequestReceived" && f.matches(e) {
			seen[e.AuditID] = true
		}
	}
	return len(seen), scanner.Err()
}
