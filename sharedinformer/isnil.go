package sharedinformer

import "reflect"

// isNil reports whether v is nil, a nil interface or a typed nil (a nil
// pointer in a non-nil interface, whose methods would panic when called).
func isNil(v any) bool {
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
