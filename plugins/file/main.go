// Package file holds the file tools: ReadFile, WriteFile, StrReplaceFile,
// Glob and Grep. Relative paths resolve against the host's working
// directory; reading anywhere is allowed, and writing asks the user, with a
// stronger approval outside the working directory.
package file

import (
	"bytes"
	"embed"
	"encoding/json"
	"sort"
	"strings"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed *.md
var descriptions embed.FS

// definitions are the tools of this plugin.
func definitions() []pluginsdk.Definition {
	skipped := make([]string, 0, len(skippedDirs))
	for d := range skippedDirs {
		skipped = append(skipped, "`"+d+"`")
	}
	sort.Strings(skipped)
	return []pluginsdk.Definition{
		pluginsdk.NewTool[ReadParams]("ReadFile", "Read a text file.", NewReadFile, pluginsdk.WithRuleArgument("path"),
			pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "read_file.md", map[string]any{
				"MaxLines": maxReadLines, "MaxKB": maxReadBytes >> 10, "MaxChars": maxReadChars,
				"MaxLineChars": maxLineChars, "Marker": truncatedMark,
			})),
		pluginsdk.NewTool[WriteParams]("WriteFile", "Write a file.", NewWriteFile, pluginsdk.WithRuleArgument("path"),
			pluginsdk.Destructive(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "write_file.md", nil)),
		pluginsdk.NewRawTool("StrReplaceFile", "Replace text in a file.", compactSchema(replaceSchema), NewStrReplaceFile, pluginsdk.WithRuleArgument("path"),
			pluginsdk.Destructive(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "str_replace_file.md", nil)),
		pluginsdk.NewTool[GlobParams]("Glob", "Find files by pattern.", NewGlob, pluginsdk.WithRuleArgument("pattern"),
			pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "glob.md", map[string]any{
				"MaxResults": maxGlobResults, "MaxDirs": maxGlobDirs,
			})),
		pluginsdk.NewTool[GrepParams]("Grep", "Search file contents.", NewGrep, pluginsdk.WithRuleArgument("path"),
			pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "grep.md", map[string]any{
				"HeadLimit": defaultHeadLimit, "Skipped": strings.Join(skipped, ", "),
			})),
	}
}

// compactSchema strips a hand-written schema's layout, keeping its order.
func compactSchema(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return json.RawMessage(s) // the SDK reports the invalid schema
	}
	return b.Bytes()
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-file).
func Tools() []pluginsdk.Definition { return definitions() }
