// Package bench holds the host's benchmarks (make bench): plugin call round
// trips beside in-process and bare gRPC calls, and plugin start-up with and
// without mutual TLS. Each benchmark runs a fixed workload once and reports
// percentiles and ratios as metrics.
package bench
