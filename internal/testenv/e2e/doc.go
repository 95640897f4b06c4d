// Package e2e holds lohibot's end-to-end test, which drives the built
// binary as a user would against a real Dovecot, PostgreSQL (when
// LOHIBOT_TEST_POSTGRES is set, else SQLite) and the sample web of
// internal/localweb/sampleweb, and the time-to-exclusion benchmark. It has no code of
// its own: see e2e_test.go.
package e2e
