package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets tests run this test binary as the lohibot command in a
// child process: with LOHIBOT_TEST_AS_MAIN=1 it behaves exactly like main.
func TestMain(m *testing.M) {
	if os.Getenv("LOHIBOT_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// cliResult is what one lohibot invocation printed and returned.
type cliResult struct {
	code   int
	stdout string
	stderr string
}

// runCLI runs lohibot in-process with args and the environment env
// (KEY=VALUE pairs; nothing else from the real environment is visible).
func runCLI(t testing.TB, env []string, args ...string) cliResult {
	t.Helper()
	return runCLIIn(t, env, "", args...)
}

// runCLIIn is runCLI with stdin.
func runCLIIn(t testing.TB, env []string, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, envFunc(env))
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// envFunc is a getenv over env (KEY=VALUE pairs) alone.
func envFunc(env []string) func(string) string {
	return func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
}

// lohibotProcess returns a command that runs lohibot (this test binary as
// main) in a child process.
func lohibotProcess(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOHIBOT_TEST_AS_MAIN=1")
	return cmd
}
