//go:build !unix

package repl

import (
	"io"
	"os"
)

// NewKeys returns nil here: without raw single-key reads the approval
// questions are answered with lines, as through a pipe.
func NewKeys(*os.File, io.Writer) KeyReader { return nil }
