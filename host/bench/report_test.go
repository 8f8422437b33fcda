//go:build unix

package bench

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// ReportEnv names the file the benchmarks append their report lines to
// (make bench prints it): Go keeps only the first lines of a benchmark's
// log.
const ReportEnv = "KOSONG_BENCH_REPORT"

var reportMu sync.Mutex

// report logs a line and appends it to the report file, if one is set.
func report(b *testing.B, format string, args ...any) {
	b.Helper()
	b.Logf(format, args...)
	path := os.Getenv(ReportEnv)
	if path == "" {
		return
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Logf("report file: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}
