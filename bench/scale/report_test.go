package scale

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The request table lists each distinct request once: samples that sent
// the same request share a line, and one that sent another gets its own,
// so a library that changed what it asked for between samples shows it.
func TestARequestThatDifferedBetweenSamplesGetsALineOfItsOwn(t *testing.T) {
	res := &Results{Config: Config{Sizes: []int{1000}}}
	same := ListRequest{Shape: ConfigMaps, Variant: string(Defaults), Library: Ours,
		Request: "GET /api/v1/configmaps (Accept: application/vnd.kubernetes.protobuf)", Answer: "application/vnd.kubernetes.protobuf, gzip"}
	other := same
	other.Request = "GET /api/v1/configmaps?limit=500 (Accept: application/vnd.kubernetes.protobuf)"
	for _, r := range []ListRequest{same, same, other, same} {
		res.noteRequest(r)
	}
	md := res.Markdown(nil)
	assert.Equal(t, 1, strings.Count(md, "`"+same.Request+"`"), "one line for the request every sample but one sent")
	assert.Equal(t, 1, strings.Count(md, "`"+other.Request+"`"), "and one for the sample that differed")
}

// A growth exponent above 1.1 is flagged in its cell; one at or below is
// not.
func TestASlopeAbove1Point1IsFlaggedInItsCell(t *testing.T) {
	assert.Contains(t, slopeCell(&Slope{Value: 1.12, Low: 1.05, High: 1.19, Points: 6}), "**above 1.1**")
	assert.NotContains(t, slopeCell(&Slope{Value: 1.1, Low: 1.02, High: 1.18, Points: 6}), "above")
	assert.NotContains(t, slopeCell(&Slope{Value: 0.98, Low: 0.95, High: 1.01, Points: 6}), "above")
	assert.Equal(t, "—", slopeCell(nil), "no fit, no figure")
}
