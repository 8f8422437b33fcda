// Command kosong-host runs LLM agents whose tools live in separate plugin
// binaries.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	hangUpAsTerminate()
	os.Exit(run(os.Args[1:]))
}

// run executes the command line and returns the exit code: 0 ok, 1 a tool or
// turn failed, 2 usage, spec or load error, 75 provider failure after retries.
func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "error: "+ee.err.Error())
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "error: "+err.Error())
	return 2
}

// exitError carries an exit code; err, if set, is printed as "error: ...".
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode wraps err with an exit code.
func exitCode(code int, err error) error { return &exitError{code: code, err: err} }
