// Package nilcheck says whether a value held in an interface is nil,
// typed nils included, for the packages that check their input.
package nilcheck

import "reflect"

// IsNil reports whether v is nil, or a typed nil (a nil pointer, map,
// slice, func or channel in a non-nil interface, whose methods would
// panic when called): `v == nil` is false for those.
func IsNil(v any) bool {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return true
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}
