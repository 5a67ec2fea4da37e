package scale

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// client-go draws each watch's timeout at random; the log writes it as N
// so the same request reads the same in every sample, and it keeps only
// the first list of its resource.
func TestARequestLogKeepsTheFirstListWithItsRandomTimeoutsAsN(t *testing.T) {
	answer := roundTripper(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Uncompressed: true}, nil
	})
	log := RequestLog{Resource: ConfigMaps}
	rt := log.Wrap(answer)
	send := func(url string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "application/json")
		_, err = rt.RoundTrip(req)
		require.NoError(t, err)
	}
	send("https://cp/api/v1/namespaces")                              // another resource
	send("https://cp/api/v1/configmaps?watch=true&resourceVersion=5") // a watch that sends no list
	send("https://cp/api/v1/configmaps?watch=true&sendInitialEvents=true&timeout=6m20s&timeoutSeconds=380")
	send("https://cp/api/v1/configmaps")
	request, answerSeen := log.List()
	assert.Equal(t, "GET /api/v1/configmaps?sendInitialEvents=true&timeout=N&timeoutSeconds=N&watch=true (Accept: application/json)", request)
	assert.Equal(t, "application/json, gzip", answerSeen)
}
