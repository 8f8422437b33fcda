package toolset

// Annotations say what a tool does, as its plugin or MCP server declares
// it; a nil field is unknown (plugins built before annotations declare
// none).
type Annotations struct {
	ReadOnly    *bool `json:"read_only,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty"`
}

// IsReadOnly says whether the tool is declared to only read.
func (a Annotations) IsReadOnly() bool { return a.ReadOnly != nil && *a.ReadOnly }

// Annotated is a Tool that declares its annotations.
type Annotated interface {
	Annotations() Annotations
}

// AnnotationsOf are t's annotations; none (all unknown) when t declares none.
func AnnotationsOf(t Tool) Annotations {
	if a, ok := t.(Annotated); ok {
		return a.Annotations()
	}
	return Annotations{}
}
