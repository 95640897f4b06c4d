package robotstxt

// Canonical returns the decoded canonical form of a URL path (see
// appendCanonical), for the tests of the non-access checks.
func Canonical(path string) string {
	return string(appendCanonical(nil, path, true))
}

// CanonicalStrict returns the strict canonical form of a URL path.
func CanonicalStrict(path string) string {
	return string(appendCanonical(nil, path, false))
}

// CompiledPattern returns the canonical literal parts of a rule value, split
// at its wildcards, and whether it is anchored, so that the fuzz test can
// check the matcher against a plain reference matcher.
func CompiledPattern(allow bool, value string) (parts []string, anchored bool) {
	r, ok := compileRule(allow, value, "", 1)
	if !ok {
		return nil, false
	}
	return append([]string{r.prefix}, r.rest...), r.anchored
}
