package apikit

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// zoneName is the form of an IANA time zone name: one or more parts
// joined by "/", each starting with a letter ("Europe/Berlin",
// "America/Argentina/Buenos_Aires", "Etc/GMT+5", "UTC").
var zoneName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z][A-Za-z0-9_+-]*)*$`)

// LoadTimezone loads the time zone an IANA name gives. It refuses what
// time.LoadLocation would take but that depends on the machine rather than
// on the name: "Local" (the server's TZ), "" (UTC by accident), and the
// files a system's zone directory holds besides the IANA zones
// (localtime, posixrules, the posix/ and right/ copies; Factory, which
// means "no zone"). So that every replica reads a workspace's days, and a
// sender's working hours, alike.
func LoadTimezone(name string) (*time.Location, error) {
	remedy := "use an IANA timezone name such as Europe/Berlin, America/New_York or UTC"
	first, _, _ := strings.Cut(name, "/")
	switch {
	case name == "":
		return nil, fmt.Errorf("no timezone is given; %s", remedy)
	case name == "Local" || name == "localtime":
		return nil, fmt.Errorf("%q is the server's own timezone, which replicas need not share; %s", name, remedy)
	case !zoneName.MatchString(name) || name == "posixrules" || name == "Factory" || first == "posix" || first == "right":
		return nil, fmt.Errorf("%q is not an IANA timezone name; %s", name, remedy)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown timezone %q; %s", name, remedy)
	}
	return loc, nil
}
