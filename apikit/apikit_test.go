package apikit_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/leadline/leadline/apikit"
)

func TestRoles(t *testing.T) {
	is := is.New(t)
	order := []apikit.Role{apikit.RoleClientViewer, apikit.RoleMember, apikit.RoleManager, apikit.RoleOwner}
	for i, a := range order {
		for j, b := range order {
			is.Equal(a.AtLeast(b), i >= j)
			if i <= j {
				is.Equal(apikit.MinRole(a, b), a)
			}
		}
	}
	is.True(!apikit.Role("admin").Valid())
	is.True(!apikit.Role("admin").AtLeast(apikit.RoleClientViewer))
}

func TestScope(t *testing.T) {
	is := is.New(t)
	all := apikit.Principal{}
	one := apikit.Principal{ClientIDs: []string{"c1"}}
	is.True(all.SeesClient("c2") && all.SeesClient(""))
	is.True(one.SeesClient("c1"))
	is.True(!one.SeesClient("c2"))
	is.True(!one.SeesClient("")) // a lead of no client belongs to the workspace
}

func TestErrorCode(t *testing.T) {
	is := is.New(t)
	e := apikit.NotFound("Lead x")
	is.Equal(apikit.ErrorCode(fmt.Errorf("wrapped: %w", e)), apikit.ENotFound)
	is.Equal(apikit.ErrorCode(errors.New("disk on fire")), apikit.EInternal)
	is.Equal(apikit.ErrorCode(nil), "")
	is.Equal(apikit.AsError(errors.New("secret detail")).Message, apikit.Internal().Message) // causes are never shown
}

func TestPage(t *testing.T) {
	is := is.New(t)
	p := apikit.NewPage[int](nil, 0, 50, 0)
	is.Equal(p.Data, []int{})
	is.True(!p.HasMore)
	is.True(apikit.NewPage([]int{1, 2}, 5, 2, 2).HasMore)
	is.True(!apikit.NewPage([]int{5}, 5, 2, 4).HasMore)
}

func TestIDsAndText(t *testing.T) {
	is := is.New(t)
	a, b := apikit.NewID(), apikit.NewID()
	is.True(apikit.ValidID(a) && a < b) // UUIDv7: time-ordered
	is.True(!apikit.ValidID("not-a-uuid"))
	is.True(apikit.Storable(map[string]any{"k": []any{"fine", 1.5, nil}}))
	is.True(!apikit.Storable(map[string]any{"k\x00": 1}))
	is.True(!apikit.Storable([]any{"\xff"}))
}

func TestLoadTimezone(t *testing.T) {
	is := is.New(t)
	for _, ok := range []string{"UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "America/Port-au-Prince"} {
		loc, err := apikit.LoadTimezone(ok)
		is.NoErr(err)
		is.Equal(loc.String(), ok)
	}
	for _, bad := range []string{"", "Local", "localtime", "posixrules", "Factory", "posix/Europe/Berlin", "right/UTC",
		"/etc/localtime", "Europe/../UTC", "./UTC", "Europe//Berlin", "Europe/Berlin ", "Mars/Olympus", "europe\\berlin"} {
		_, err := apikit.LoadTimezone(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
