package config

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/providers"
)

// Prices are what a model costs, in US dollars per million tokens:
//
//	models:
//	  sonnet:
//	    provider: anthropic
//	    model: claude-sonnet-4-5
//	    prices: {input: 3, output: 15, cached_input: 0.3}
//	prices:                        # by model name, for models chosen without an alias
//	  gpt-4.1: {input: 2, output: 8, cached_input: 0.5}
//
// input and output are required; cached_input (tokens read from the
// provider's prompt cache) defaults to input.
type Prices struct {
	Input, Output, CachedInput float64
}

// Cost is the cost of u in US dollars. Input tokens read from the cache
// cost CachedInput, the other input tokens (cache writes included) Input.
func (p Prices) Cost(u providers.Usage) float64 {
	cached := min(u.CacheReadTokens, u.InputTokens)
	return (float64(u.InputTokens-cached)*p.Input + float64(cached)*p.CachedInput + float64(u.OutputTokens)*p.Output) / 1e6
}

// PricesOf is the prices of the model chosen through alias (nil: none),
// else of the model named model in the top-level prices; nil when
// neither gives any.
func (f *File) PricesOf(alias *Model, model string) *Prices {
	if alias != nil && alias.Prices != nil {
		return alias.Prices
	}
	if p, ok := f.Prices[model]; ok {
		return &p
	}
	return nil
}

// prices reads a prices mapping (where names it in errors).
func (p parser) prices(n *yaml.Node, where string) (Prices, error) {
	var pr Prices
	if n.Kind != yaml.MappingNode {
		return pr, p.errorf(n, "%s: want a mapping with input, output and cached_input (US dollars per million tokens)", where)
	}
	var cached bool
	err := p.fields(n, where, map[string]func(k, v *yaml.Node) error{
		"input":  func(_, v *yaml.Node) (err error) { pr.Input, err = p.price(v, where+".input"); return err },
		"output": func(_, v *yaml.Node) (err error) { pr.Output, err = p.price(v, where+".output"); return err },
		"cached_input": func(_, v *yaml.Node) (err error) {
			cached = true
			pr.CachedInput, err = p.price(v, where+".cached_input")
			return err
		},
	})
	if err != nil {
		return pr, err
	}
	for _, k := range []string{"input", "output"} {
		if !hasKey(n, k) {
			return pr, p.errorf(n, "%s.%s: missing (US dollars per million tokens)", where, k)
		}
	}
	if !cached {
		pr.CachedInput = pr.Input
	}
	return pr, nil
}

// price reads a non-negative number of dollars.
func (p parser) price(n *yaml.Node, field string) (float64, error) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		if v, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err == nil && v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v, nil
		}
	}
	return 0, p.errorf(n, "%s: want a number of US dollars per million tokens, 0 or more, not %q", field, n.Value)
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
