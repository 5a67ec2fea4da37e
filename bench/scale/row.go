package scale

import "slices"

// Row is one line of the ladder's tables: one measure of one workload, at
// one size, for both libraries, run by run. Ours[i] and ClientGo[i] are
// the i-th interleaved pair.
type Row struct {
	Workload string // "initial sync", "heap per object", ...
	Shape    string // ConfigMaps, Pods or Widgets
	N        int
	Variant  string // how the informers were built, or readers=10
	Unit     string // "s", "B/object", "writes/s", ...
	// HigherIsBetter is true for rates (writes/s), false for costs.
	HigherIsBetter bool
	Ours, ClientGo []float64
	// Foreign is the CPU, in cores, that processes not measured took
	// during each pair (served rows only; nil for in-process rows).
	Foreign []float64
}

// ForeignLoad is the most CPU other processes took during any pair of
// the row, in cores.
func (r Row) ForeignLoad() float64 {
	most := 0.0
	for _, f := range r.Foreign {
		most = max(most, f)
	}
	return most
}

// Ratio is ours/client-go over the row's pairs.
func (r Row) Ratio() (Ratio, error) { return PairedRatio(r.Ours, r.ClientGo) }

// Results is everything one run of the ladder measured.
type Results struct {
	Config Config
	Rows   []Row
	// Floors are what a bare read costs, beside the libraries: the time
	// to GET the LIST response bytes without decoding them, per shape
	// and size.
	Floors []Floor
	// Relists are our and client-go's peak live heap during one relist
	// over the steady live heap before it, per size.
	Relists []RelistPeak
	// Bounded is the check that memory stays bounded over relists in a
	// row at the ladder's largest size.
	Bounded *BoundedCheck
	// Requests are the requests that carried each sync row's initial
	// list, each distinct one once, so a reader sees what each library
	// asked for and what it got.
	Requests []ListRequest
}

// ListRequest is the request one library made for the initial list of a
// sync row, and the answer's Content-Type and encoding (RequestLog).
type ListRequest struct {
	Shape, Variant, Library string
	Request, Answer         string
}

// noteRequest adds r to the results unless an equal one is there.
func (res *Results) noteRequest(r ListRequest) {
	if !slices.Contains(res.Requests, r) {
		res.Requests = append(res.Requests, r)
	}
}

// Floor is the raw-bytes floor of one initial sync.
type Floor struct {
	Shape    string
	N        int
	Encoding string // the list's encoding: protobuf, or JSON for Widgets
	Seconds  []float64
}

// RelistPeak holds the peak/steady ratios of each library's relists.
type RelistPeak struct {
	N              int
	Ours, ClientGo []float64
}

// BoundedCheck is our live heap after each of several relists in a row,
// over the live heap after the first sync.
type BoundedCheck struct {
	N      int
	Growth []float64 // live heap after relist i / after the first sync
}

// add appends a sample pair to the row matching (workload, shape, n,
// variant), making the row on first use.
func (res *Results) add(proto Row, ours, clientGo float64) {
	r := res.row(proto)
	r.Ours = append(r.Ours, ours)
	r.ClientGo = append(r.ClientGo, clientGo)
}

// addForeign records the foreign load of a pair added to proto's row.
func (res *Results) addForeign(proto Row, cores float64) {
	r := res.row(proto)
	r.Foreign = append(r.Foreign, cores)
}

// row returns the row matching (workload, shape, n, variant), making it
// on first use.
func (res *Results) row(proto Row) *Row {
	for i := range res.Rows {
		r := &res.Rows[i]
		if r.Workload == proto.Workload && r.Shape == proto.Shape && r.N == proto.N && r.Variant == proto.Variant {
			return r
		}
	}
	res.Rows = append(res.Rows, proto)
	return &res.Rows[len(res.Rows)-1]
}

// Find returns the row of (workload, shape, n, variant), if measured.
func (res *Results) Find(workload, shape string, n int, variant string) (Row, bool) {
	for _, r := range res.Rows {
		if r.Workload == workload && r.Shape == shape && r.N == n && r.Variant == variant {
			return r, true
		}
	}
	return Row{}, false
}
