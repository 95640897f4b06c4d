package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
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
