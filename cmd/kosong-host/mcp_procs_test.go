package main

import "testing"

func TestServeProcs(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want int
	}{
		{"one processor by default", nil, 1},
		{"GOMAXPROCS decides", map[string]string{"GOMAXPROCS": "4"}, 0},
		{"GOGC changes nothing", map[string]string{"GOGC": "100"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serveProcs(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Fatalf("serveProcs = %d, want %d", got, tt.want)
			}
		})
	}
}
