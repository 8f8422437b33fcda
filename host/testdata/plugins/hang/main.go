// Command hang is a test plugin that never completes the handshake.
package main

import "time"

func main() {
	time.Sleep(time.Hour)
}
