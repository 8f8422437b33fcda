package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/providers"
)

func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("script %s: file not found", path)
	}
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return data, nil
}

// errorKinds are the values of a turn's error field.
var errorKinds = map[string]providers.ErrorKind{
	"auth":           providers.ErrAuth,
	"rate_limit":     providers.ErrRateLimit,
	"server":         providers.ErrServer,
	"connection":     providers.ErrConnection,
	"empty_response": providers.ErrEmptyResponse,
	"bad_request":    providers.ErrBadRequest,
}

// stopReasons are the values of a turn's stop field.
var stopReasons = map[string]providers.StopReason{
	string(providers.StopEnd):           providers.StopEnd,
	string(providers.StopToolUse):       providers.StopToolUse,
	string(providers.StopMaxTokens):     providers.StopMaxTokens,
	string(providers.StopContentFilter): providers.StopContentFilter,
	string(providers.StopOther):         providers.StopOther,
}

// parser walks the YAML tree; every error names the file, the line and the
// field, on one line.
type parser struct{ path string }

func (p parser) errorf(n *yaml.Node, field, format string, args ...any) error {
	return fmt.Errorf("script %s: line %d: %s: %s", p.path, n.Line, field, fmt.Sprintf(format, args...))
}

func parse(path string, data []byte) ([]Turn, error) {
	p := parser{path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " ")
		return nil, fmt.Errorf("script %s: invalid YAML: %s", path, msg)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("script %s: empty, want a mapping with a turns list", path)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root, "top level", "want a mapping with a turns list")
	}
	var turnsNode *yaml.Node
	var defaultDelay time.Duration
	err := p.fields(root, "top level", map[string]func(*yaml.Node, string) error{
		"turns": func(n *yaml.Node, field string) error {
			if n.Kind != yaml.SequenceNode {
				return p.errorf(n, field, "want a list of turns")
			}
			turnsNode = n
			return nil
		},
		"delay": func(n *yaml.Node, field string) (err error) {
			defaultDelay, err = p.duration(n, field)
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	if turnsNode == nil {
		return nil, p.errorf(root, "turns", "missing")
	}
	turns := make([]Turn, 0, len(turnsNode.Content))
	for i, n := range turnsNode.Content {
		t, err := p.turn(n, fmt.Sprintf("turns[%d]", i), defaultDelay)
		if err != nil {
			return nil, err
		}
		turns = append(turns, t)
	}
	return turns, nil
}

// fields calls the handler of each key of mapping n; an unknown key is an
// error listing the known ones.
func (p parser) fields(n *yaml.Node, where string, handlers map[string]func(*yaml.Node, string) error) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		h, ok := handlers[k.Value]
		if !ok {
			known := make([]string, 0, len(handlers))
			for name := range handlers {
				known = append(known, name)
			}
			sort.Strings(known)
			return p.errorf(k, where, "unknown field %q (known: %s)", k.Value, strings.Join(known, ", "))
		}
		field := k.Value
		if where != "top level" {
			field = where + "." + k.Value
		}
		if err := h(v, field); err != nil {
			return err
		}
	}
	return nil
}

func (p parser) turn(n *yaml.Node, where string, defaultDelay time.Duration) (Turn, error) {
	t := Turn{Delay: defaultDelay}
	if n.Kind != yaml.MappingNode {
		return t, p.errorf(n, where, "want a mapping (text, reasoning, tool_calls, delay, usage, error, stop)")
	}
	err := p.fields(n, where, map[string]func(*yaml.Node, string) error{
		"text": func(v *yaml.Node, field string) (err error) {
			t.Text, err = p.str(v, field)
			return err
		},
		"reasoning": func(v *yaml.Node, field string) (err error) {
			t.Reasoning, err = p.str(v, field)
			return err
		},
		"delay": func(v *yaml.Node, field string) (err error) {
			t.Delay, err = p.duration(v, field)
			return err
		},
		"usage": func(v *yaml.Node, field string) (err error) {
			t.Usage, err = p.usage(v, field)
			return err
		},
		"error": func(v *yaml.Node, field string) error {
			s, err := p.str(v, field)
			if err != nil {
				return err
			}
			kind, ok := errorKinds[s]
			if !ok {
				return p.errorf(v, field, "unknown error %q (known: auth, bad_request, connection, empty_response, rate_limit, server)", s)
			}
			t.Error = kind
			return nil
		},
		"stop": func(v *yaml.Node, field string) error {
			s, err := p.str(v, field)
			if err != nil {
				return err
			}
			stop, ok := stopReasons[s]
			if !ok {
				return p.errorf(v, field, "unknown stop reason %q (known: content_filter, end_turn, max_tokens, other, tool_use)", s)
			}
			t.Stop = stop
			return nil
		},
		"tool_calls": func(v *yaml.Node, field string) error {
			if v.Kind != yaml.SequenceNode {
				return p.errorf(v, field, "want a list of tool calls")
			}
			for j, c := range v.Content {
				tc, err := p.toolCall(c, fmt.Sprintf("%s[%d]", field, j))
				if err != nil {
					return err
				}
				t.ToolCalls = append(t.ToolCalls, tc)
			}
			return nil
		},
	})
	return t, err
}

func (p parser) toolCall(n *yaml.Node, where string) (providers.ToolCall, error) {
	var tc providers.ToolCall
	if n.Kind != yaml.MappingNode {
		return tc, p.errorf(n, where, "want a mapping with name, arguments and optionally id, truncated")
	}
	hasArgs := false
	err := p.fields(n, where, map[string]func(*yaml.Node, string) error{
		"id": func(v *yaml.Node, field string) (err error) {
			tc.ID, err = p.str(v, field)
			return err
		},
		"name": func(v *yaml.Node, field string) (err error) {
			tc.Name, err = p.str(v, field)
			return err
		},
		"truncated": func(v *yaml.Node, field string) error {
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&tc.Truncated) != nil {
				return p.errorf(v, field, "want true or false, not %q", v.Value)
			}
			return nil
		},
		"arguments": func(v *yaml.Node, field string) error {
			hasArgs = true
			switch {
			case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
				tc.Arguments = "{}"
			case v.Kind == yaml.ScalarNode:
				tc.Arguments = v.Value // JSON text, kept verbatim (even if invalid)
			case v.Kind == yaml.MappingNode:
				// toJSON expands aliases: yaml's decoder first refuses a
				// billion laughs (an alias of aliases of aliases...).
				var probe any
				if err := v.Decode(&probe); err != nil {
					return p.errorf(v, field, "%s", strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: ")), " "))
				}
				var b bytes.Buffer
				if err := p.toJSON(&b, v, field); err != nil {
					return err
				}
				tc.Arguments = b.String()
			default:
				return p.errorf(v, field, "want a mapping or a JSON string")
			}
			return nil
		},
	})
	if err != nil {
		return tc, err
	}
	if tc.Name == "" {
		return tc, p.errorf(n, where+".name", "missing")
	}
	if !hasArgs {
		tc.Arguments = "{}"
	}
	return tc, nil
}

// toJSON writes n as JSON, keeping the order of mapping keys.
func (p parser) toJSON(b *bytes.Buffer, n *yaml.Node, field string) error {
	switch n.Kind {
	case yaml.AliasNode:
		return p.toJSON(b, n.Alias, field)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return p.errorf(k, field, "mapping keys must be plain strings")
			}
			key, _ := marshalPlain(k.Value)
			b.Write(key)
			b.WriteByte(':')
			if err := p.toJSON(b, n.Content[i+1], field+"."+k.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := p.toJSON(b, c, fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		var v any
		if err := n.Decode(&v); err != nil {
			return p.errorf(n, field, "%v", err)
		}
		if _, ok := v.(time.Time); ok {
			v = n.Value // keep timestamps as written
		}
		out, err := marshalPlain(v)
		if err != nil {
			return p.errorf(n, field, "value %q has no JSON form", n.Value)
		}
		b.Write(out)
	}
	return nil
}

func (p parser) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errorf(n, field, "want a string")
	}
	if n.Tag == "!!null" {
		return "", nil
	}
	return n.Value, nil
}

func (p parser) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := p.str(n, field)
	if err != nil || s == "" {
		return 0, err
	}
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, p.errorf(n, field, "want a duration such as 50ms, not %q", s)
	}
	return d, nil
}

func (p parser) usage(n *yaml.Node, where string) (*providers.Usage, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, where, "want a mapping (input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens)")
	}
	u := &providers.Usage{}
	num := func(dst *int64) func(*yaml.Node, string) error {
		return func(v *yaml.Node, field string) error {
			i, err := strconv.ParseInt(v.Value, 10, 64)
			if v.Kind != yaml.ScalarNode || err != nil || i < 0 {
				return p.errorf(v, field, "want a non-negative integer, not %q", v.Value)
			}
			*dst = i
			return nil
		}
	}
	err := p.fields(n, where, map[string]func(*yaml.Node, string) error{
		"input_tokens":          num(&u.InputTokens),
		"output_tokens":         num(&u.OutputTokens),
		"cache_read_tokens":     num(&u.CacheReadTokens),
		"cache_creation_tokens": num(&u.CacheCreationTokens),
	})
	return u, err
}

// marshalPlain is json.Marshal without HTML escaping: arguments keep `<`,
// `>` and `&` as the script wrote them, as a model would.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
