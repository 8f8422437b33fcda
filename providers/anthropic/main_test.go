package anthropic_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// fuzzMinimizeTime bounds the minimization of each new input FuzzStream
// finds, unless -fuzzminimizetime is given. The Messages API's streams are
// long (a seed is about 1 KB of SSE) and the minimizer tries every pair of
// cut points, about n²/2 runs: at the default of 60 s per input a worker
// spends the whole of a short -fuzztime minimizing the first few inputs
// that reach new code, and fuzzes a few dozen inputs instead of tens of
// thousands.
const fuzzMinimizeTime = "250ms"

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
	if !given {
		if err := flag.Set("test.fuzzminimizetime", fuzzMinimizeTime); err != nil {
			fmt.Fprintln(os.Stderr, "anthropic tests: -fuzzminimizetime:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
