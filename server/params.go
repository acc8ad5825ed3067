package server

import "reflect"

// optional is a query parameter that may be absent, so that "not sent"
// and the zero value differ (replied=false is a filter; no replied is none).
type optional[T any] struct {
	Value T
	Set   bool
}

// Receiver lets huma parse the parameter into Value.
func (o *optional[T]) Receiver() reflect.Value { return reflect.ValueOf(o).Elem().Field(0) }

// OnParamSet records whether the parameter was sent.
func (o *optional[T]) OnParamSet(isSet bool, _ any) { o.Set = isSet }

// ptr returns a pointer to the value when it was sent, else nil.
func (o optional[T]) ptr() *T {
	if !o.Set {
		return nil
	}
	v := o.Value
	return &v
}
