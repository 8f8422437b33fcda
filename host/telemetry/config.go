package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// FileConfig is the `telemetry:` block of the configuration file:
//
//	telemetry:
//	  endpoint: http://127.0.0.1:4318   # turns telemetry on
//	  protocol: http/protobuf           # or grpc
//	  service_name: kosong-ci
//	  resource_attributes: {deployment.environment: ci, team: platform}
//	  capture_content: false            # the opt-in of OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
//
// Each OTEL_* variable overrides the file's setting it names (see
// Options); the admin policy's forced endpoint overrides both.
type FileConfig struct {
	Endpoint           string
	Protocol           string
	ServiceName        string
	ResourceAttributes map[string]string
	CaptureContent     bool
}

// LoadFileConfig reads the telemetry block of the configuration file at
// path (a missing file, or one without the block, has none). Only that
// block is read and checked here: the rest of the file is the business
// of the commands that use it. Errors name the file, line and key.
func LoadFileConfig(path string) (FileConfig, error) {
	var fc FileConfig
	if path == "" {
		return fc, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fc, nil
	}
	if err != nil {
		return fc, fmt.Errorf("config %s: %w", path, err)
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fc, nil // the commands that read the file say what is wrong with it
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "telemetry" {
			return ParseFileConfig(path, root.Content[i+1])
		}
	}
	return fc, nil
}

// ParseFileConfig checks the telemetry block n of the file at path.
func ParseFileConfig(path string, n *yaml.Node) (FileConfig, error) {
	var fc FileConfig
	errorf := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("config %s: line %d: telemetry.%s", path, n.Line, fmt.Sprintf(format, args...))
	}
	if n.Tag == "!!null" {
		return fc, nil
	}
	if n.Kind != yaml.MappingNode {
		return fc, fmt.Errorf("config %s: line %d: telemetry: want a mapping with %s", path, n.Line, strings.Join(fileKeys, ", "))
	}
	str := func(v *yaml.Node, key string) (string, error) {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return "", errorf(v, "%s: want a string", key)
		}
		return strings.TrimSpace(v.Value), nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var err error
		switch k.Value {
		case "endpoint":
			if fc.Endpoint, err = str(v, "endpoint"); err == nil && !strings.Contains(fc.Endpoint, "://") {
				err = errorf(v, "endpoint: %q is not a URL (e.g. http://127.0.0.1:4318)", fc.Endpoint)
			}
		case "protocol":
			if fc.Protocol, err = str(v, "protocol"); err == nil && fc.Protocol != "grpc" && fc.Protocol != "http/protobuf" {
				err = errorf(v, "protocol: %q: want grpc or http/protobuf", fc.Protocol)
			}
		case "service_name":
			fc.ServiceName, err = str(v, "service_name")
		case "capture_content":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				err = errorf(v, "capture_content: want true or false, not %q", v.Value)
			} else {
				fc.CaptureContent = v.Value == "true"
			}
		case "resource_attributes":
			if v.Kind != yaml.MappingNode {
				err = errorf(v, "resource_attributes: want a mapping of names to values")
				break
			}
			fc.ResourceAttributes = map[string]string{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				val, verr := str(v.Content[j+1], "resource_attributes."+v.Content[j].Value)
				if verr != nil {
					return fc, verr
				}
				fc.ResourceAttributes[v.Content[j].Value] = val
			}
		default:
			err = errorf(k, "%s: unknown key (known: %s)", k.Value, strings.Join(fileKeys, ", "))
		}
		if err != nil {
			return fc, err
		}
	}
	return fc, nil
}

var fileKeys = []string{"capture_content", "endpoint", "protocol", "resource_attributes", "service_name"}

// Apply sets the file's settings in o (as Options' defaults: the OTEL_*
// variables still win).
func (fc FileConfig) Apply(o *Options) {
	o.Endpoint, o.Protocol = fc.Endpoint, fc.Protocol
	if fc.ServiceName != "" {
		o.ServiceName = fc.ServiceName
	}
	o.ResourceAttributes = fc.ResourceAttributes
	o.CaptureContent = o.CaptureContent || fc.CaptureContent
}

// sortedAttrs are m's keys, sorted (a stable resource).
func sortedAttrs(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
