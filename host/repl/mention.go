package repl

// completePath lists the paths under workDir that complete word ("@" and
// a path prefix), each as "@PATH".
func completePath(workDir, word string) []string { return nil }
