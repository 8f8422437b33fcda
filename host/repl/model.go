package repl

// SetMaxContextSize sets the context window the usage line measures
// against (0: unknown), as when /model switches the model.
func (p *TextPrinter) SetMaxContextSize(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maxContext = n
}
