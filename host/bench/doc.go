// Package bench holds the host's benchmarks (make bench): plugin call round
// trips beside in-process and bare gRPC calls and beside an MCP stdio
// server (in turns, as ratios), plugin start-up with and without mutual
// TLS, and the parallel start of the default agent's built-in plugins
// against its optimum. Each benchmark runs a fixed workload once and
// reports percentiles and ratios as metrics.
package bench
