package file

import (
	"path"
	"slices"
	"strings"
)

// fileTypes are Grep's `type` filters, named as ripgrep names them: each
// lists the glob patterns a file's name must match.
var fileTypes = map[string][]string{
	"c":          {"*.c", "*.h", "*.H"},
	"cpp":        {"*.C", "*.cc", "*.cpp", "*.cxx", "*.c++", "*.h", "*.H", "*.hh", "*.hpp", "*.hxx", "*.h++", "*.inl", "*.ipp"},
	"cs":         {"*.cs", "*.csx"},
	"css":        {"*.css", "*.scss", "*.sass", "*.less"},
	"dart":       {"*.dart"},
	"docker":     {"Dockerfile", "Dockerfile.*", "*.dockerfile", "Containerfile"},
	"elixir":     {"*.ex", "*.exs", "*.eex", "*.heex", "*.leex"},
	"erlang":     {"*.erl", "*.hrl"},
	"go":         {"*.go"},
	"haskell":    {"*.hs", "*.lhs"},
	"html":       {"*.html", "*.htm", "*.xhtml"},
	"java":       {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"js":         {"*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"},
	"json":       {"*.json", "*.jsonc", "*.jsonl", "composer.lock"},
	"kotlin":     {"*.kt", "*.kts"},
	"lua":        {"*.lua"},
	"make":       {"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"},
	"markdown":   {"*.md", "*.markdown", "*.mdx", "*.mkd", "*.mkdn", "*.mdown"},
	"md":         {"*.md", "*.markdown", "*.mdx", "*.mkd", "*.mkdn", "*.mdown"},
	"nix":        {"*.nix"},
	"ocaml":      {"*.ml", "*.mli", "*.mll", "*.mly"},
	"perl":       {"*.pl", "*.pm", "*.pod", "*.t", "*.psgi"},
	"php":        {"*.php", "*.php3", "*.php4", "*.php5", "*.phtml"},
	"proto":      {"*.proto"},
	"py":         {"*.py", "*.pyi", "*.pyw"},
	"python":     {"*.py", "*.pyi", "*.pyw"},
	"r":          {"*.R", "*.r", "*.Rmd", "*.Rnw"},
	"rb":         {"*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile", ".irbrc"},
	"ruby":       {"*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile", ".irbrc"},
	"rust":       {"*.rs"},
	"scala":      {"*.scala", "*.sbt", "*.sc"},
	"sh":         {"*.sh", "*.bash", "*.zsh", "*.ksh", "*.csh", "*.tcsh", ".bashrc", ".bash_profile", ".zshrc", ".profile"},
	"sql":        {"*.sql", "*.psql"},
	"swift":      {"*.swift"},
	"terraform":  {"*.tf", "*.tfvars", "*.hcl"},
	"tf":         {"*.tf", "*.tfvars", "*.hcl"},
	"toml":       {"*.toml", "Cargo.lock"},
	"ts":         {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"txt":        {"*.txt"},
	"vim":        {"*.vim", ".vimrc", ".gvimrc"},
	"xml":        {"*.xml", "*.xsd", "*.xsl", "*.xslt", "*.svg", "*.plist"},
	"yaml":       {"*.yaml", "*.yml"},
	"zig":        {"*.zig"},
	"typescript": {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"javascript": {"*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"},
}

// fileTypeNames lists the known types, sorted, for messages and docs.
func fileTypeNames() []string {
	names := make([]string, 0, len(fileTypes))
	for n := range fileTypes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// typeMatcher returns whether a file name is of the type.
func typeMatcher(globs []string) func(name string) bool {
	var exts, names []string // "*.go" -> ".go"; plain names
	var others []string
	for _, g := range globs {
		switch {
		case strings.HasPrefix(g, "*.") && !strings.ContainsAny(g[2:], "*?[{\\"):
			exts = append(exts, g[1:])
		case !strings.ContainsAny(g, "*?[{\\"):
			names = append(names, g)
		default:
			others = append(others, g)
		}
	}
	return func(name string) bool {
		for _, e := range exts {
			if strings.HasSuffix(name, e) {
				return true
			}
		}
		if slices.Contains(names, name) {
			return true
		}
		for _, g := range others {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
		return false
	}
}
