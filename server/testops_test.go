package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/danielgtaylor/huma/v2"

	"github.com/leadline/leadline/apikit"
)

// testOps are operations only tests mount: a manager-only call, a call
// that blocks until released, one that fails with a 5xx until told not to,
// and one that panics.
type testOps struct {
	entered chan struct{}
	release chan struct{}
	runs    atomic.Int32
	fail    atomic.Bool
}

type okOutput struct {
	Body struct {
		Data string `json:"data"`
		Runs int32  `json:"runs"`
	}
}

type echoInput struct {
	Body struct {
		N int `json:"n"`
	}
}

func (e *env) addTestOps() *testOps {
	ops := &testOps{entered: make(chan struct{}, 16), release: make(chan struct{})}
	ops.fail.Store(true)
	ok := func(runs int32) *okOutput {
		o := &okOutput{}
		o.Body.Data, o.Body.Runs = "ok", runs
		return o
	}
	register(e.srv, huma.Operation{OperationID: "test-manager", Method: http.MethodPost, Path: "/v1/test/manager"},
		apikit.RoleManager, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *echoInput) (*okOutput, error) {
			return ok(ops.runs.Add(1)), nil
		})
	register(e.srv, huma.Operation{OperationID: "test-block", Method: http.MethodPost, Path: "/v1/test/block"},
		apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *echoInput) (*okOutput, error) {
			ops.entered <- struct{}{}
			<-ops.release
			return ok(ops.runs.Add(1)), nil
		})
	register(e.srv, huma.Operation{OperationID: "test-flaky", Method: http.MethodPost, Path: "/v1/test/flaky"},
		apikit.RoleMember, apikit.ClassWrite, func(ctx context.Context, p apikit.Principal, in *echoInput) (*okOutput, error) {
			n := ops.runs.Add(1)
			if ops.fail.Load() {
				return nil, errors.New("database went away")
			}
			return ok(n), nil
		})
	register(e.srv, huma.Operation{OperationID: "test-panic", Method: http.MethodGet, Path: "/v1/test/panic"},
		apikit.RoleClientViewer, apikit.ClassRead, func(ctx context.Context, p apikit.Principal, in *struct{}) (*okOutput, error) {
			panic("boom")
		})
	return ops
}
