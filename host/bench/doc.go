// Package bench holds the host's benchmarks (make bench): plugin call round
// trips beside in-process and bare gRPC calls and beside an MCP stdio
// server (in turns, as ratios), plugin start-up with and without mutual
// TLS, the parallel start of the default agent's built-in plugins against
// its optimum, cancellation, and the safety figures (calls per second of
// 1,000 concurrent calls across 4 plugins, restart latency after a crash,
// RSS and PSS of a host with the default agent). Each benchmark runs a
// fixed workload once and reports percentiles and ratios as metrics; its
// lines also go in full to the file $KOSONG_BENCH_REPORT (make bench
// prints it).
package bench
