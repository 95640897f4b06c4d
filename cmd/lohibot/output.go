package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/net/idna"
)

// This file holds how lohibot speaks to people: error messages, times and
// site names in text output. JSON output keeps the machine forms (RFC 3339
// times, A-label site names).

// pkgPrefix matches the Go package prefixes that errors carry inside the
// program ("policy: ", "mailbot: ") at the start of a message or of a
// wrapped part. Command names that are also package names (audit, report,
// serve, demo) are left: there they name what the user ran.
var pkgPrefix = regexp.MustCompile(`(^|: |\(|\n)(?:policy|mailbot|crawler|db|identity|extract|robots|classify|message|botpage|dbtest): `)

// userMessage is err as the user reads it: without Go package prefixes.
func userMessage(err error) string {
	s := err.Error()
	for {
		t := pkgPrefix.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
}

// humanTimeLayout is the one time format of text output.
const humanTimeLayout = "2006-01-02 15:04:05 UTC"

// humanTime formats t for people: UTC, to the second, with its zone.
func humanTime(t time.Time) string { return t.UTC().Format(humanTimeLayout) }

// humanTimeMS is humanTime to the millisecond, for request logs, where the
// gaps between requests are evidence.
func humanTimeMS(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") }

// showSite writes a site (or host) as people write it: an IDN in Unicode
// with its A-label beside it, "bücher.de (xn--bcher-kva.de)"; any other
// name as it is.
func showSite(name string) string {
	if !strings.Contains(name, "xn--") {
		return name
	}
	u, err := idna.Lookup.ToUnicode(name)
	if err != nil || u == name {
		return name
	}
	return u + " (" + name + ")"
}

// argName is the name of a command's positional argument, from its Use
// line: "DOMAIN" for "remove DOMAIN [--reason R] --by WHO".
func argName(cmd *cobra.Command) string {
	fields := strings.Fields(cmd.Use)
	afterFlag := false
	for _, w := range fields[min(1, len(fields)):] {
		switch {
		case strings.HasPrefix(w, "-"):
			afterFlag = !strings.Contains(w, "=") // --robots FILE: FILE is the flag's
		case strings.ContainsAny(w, "[]"), afterFlag:
			afterFlag = false
		default:
			return strings.TrimSuffix(w, "...")
		}
	}
	return "argument"
}

// argCountError is the usage error for a wrong number of arguments, in our
// words and with the command's usage line.
func argCountError(cmd *cobra.Command, args []string, want string) error {
	what := fmt.Sprintf(": missing %s", argName(cmd))
	if len(args) > 0 {
		what = fmt.Sprintf(" takes %s %s, got %d: %s", want, argName(cmd), len(args), strings.Join(args, " "))
	}
	return &exitError{code: exitBadInput, err: fmt.Errorf("%s%s", strings.TrimPrefix(cmd.CommandPath(), "lohibot "), what),
		hint: fmt.Sprintf("Usage: %s\nSee '%s --help'.", cmd.UseLine(), cmd.CommandPath())}
}
