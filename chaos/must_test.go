package chaos_test

// must returns v, and panics (failing the test) if err is not nil: for
// constructors whose inputs a test wrote correctly.
func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}
