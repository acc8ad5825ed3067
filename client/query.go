package client

import (
	"context"
	"iter"
	"net/url"
	"reflect"
	"strconv"
	"time"

	"github.com/leadline/leadline/apikit"
)

// queryOf encodes the fields of a params struct that carry a query tag
// and are not zero (embedded structs included).
func queryOf(params any) url.Values {
	q := url.Values{}
	v := reflect.ValueOf(params)
	if !v.IsValid() {
		return q
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return q
		}
		v = v.Elem()
	}
	addQuery(q, v)
	return q
}

func addQuery(q url.Values, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if f.Anonymous && fv.Kind() == reflect.Struct {
			addQuery(q, fv)
			continue
		}
		name := f.Tag.Get("query")
		if name == "" || fv.IsZero() {
			continue
		}
		switch x := fv.Interface().(type) {
		case time.Time:
			q.Set(name, x.UTC().Format(time.RFC3339Nano))
		case *bool:
			q.Set(name, strconv.FormatBool(*x))
		case int:
			q.Set(name, strconv.Itoa(x))
		case bool:
			q.Set(name, strconv.FormatBool(x))
		case []string:
			for _, s := range x {
				q.Add(name, s)
			}
		default:
			q.Set(name, fv.String())
		}
	}
}

// PageParams are a list's page: up to Limit items (1 to 200; the server's
// default is 50) from Offset.
type PageParams struct {
	Limit  int `query:"limit"`
	Offset int `query:"offset"`
}

func (p *PageParams) pageParams() *PageParams { return p }

// all iterates over every item of every page list returns, from p's
// offset on: it asks for the next page while the one before has more.
func all[P any, PP interface {
	*P
	pageParams() *PageParams
}, T any](ctx context.Context, p P, list func(ctx context.Context, p P) (*apikit.Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			page, err := list(ctx, p)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.Data {
				if !yield(item, nil) {
					return
				}
			}
			if !page.HasMore || len(page.Data) == 0 {
				return
			}
			PP(&p).pageParams().Offset = page.Offset + len(page.Data)
		}
	}
}
