// Command sockprobe tries one network operation, for end-to-end tests of
// the sandbox: it exits 0 when the operation succeeded, 3 when it was
// refused (the error on stderr), 2 on bad usage.
//
//	sockprobe abstract NAME   connect to the abstract unix socket @NAME
//	sockprobe udp HOST:PORT   send a datagram
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sockprobe abstract NAME | udp HOST:PORT")
		os.Exit(2)
	}
	var c net.Conn
	var err error
	switch os.Args[1] {
	case "abstract":
		c, err = net.Dial("unix", "@"+os.Args[2])
	case "udp":
		if c, err = net.Dial("udp", os.Args[2]); err == nil {
			_, err = c.Write([]byte("x"))
		}
	default:
		fmt.Fprintf(os.Stderr, "sockprobe: unknown operation %q\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sockprobe:", err)
		os.Exit(3)
	}
	c.Close()
}
