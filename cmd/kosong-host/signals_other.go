//go:build !unix

package main

// hangUpAsTerminate: there is no SIGHUP outside unix.
func hangUpAsTerminate() {}
