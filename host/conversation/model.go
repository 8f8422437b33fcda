package conversation

import (
	"errors"

	"github.com/kosong-host/kosong-host/host/suggest"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// selectModel is registry.Select with a "did you mean" added to a model
// name it does not know (--model, /model).
func selectModel(opts registry.Options) (*registry.Selection, error) {
	sel, err := registry.Select(opts)
	var ce *registry.ConfigError
	if errors.As(err, &ce) && ce.Unknown != "" {
		if hint := suggest.Hint(ce.Unknown, ce.Known); hint != "" {
			e := *ce
			e.Msg += hint
			return nil, &e
		}
	}
	return sel, err
}
