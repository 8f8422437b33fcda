package spec

import (
	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/host/distribution"
)

// checkSource checks a reference's `source` and `version`: an oci://
// reference for a plugin named by a bare name, not pinned by sha256 (the
// digest or the lock file pins it).
func (p *parser) checkSource(r *ToolRef, n, source, version *yaml.Node, where string) error {
	if source == nil {
		if version != nil {
			return p.errf(version, "%s: version goes with a source (oci://REGISTRY/REPOSITORY)", where)
		}
		return nil
	}
	if r.Lookup == "" {
		return p.errf(source, "%s: a plugin with a source is named by a bare name, not a path (%q)", where, r.Plugin)
	}
	if r.SHA256 != "" {
		return p.errf(source, "%s: sha256 pins a local binary; a source is pinned by its digest (@sha256:...) or the lock file", where)
	}
	if _, err := distribution.ParseRef(r.Source, r.Version); err != nil {
		return p.errf(source, "%s: %v", where, err)
	}
	return nil
}
