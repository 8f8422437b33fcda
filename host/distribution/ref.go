// Package distribution publishes plugins to OCI registries and installs
// them from there: an image index with one manifest per platform, whose
// config blob holds the plugin's Describe output and whose one layer is
// the plugin binary. Installed binaries live in a content-addressed cache.
package distribution

import (
	"fmt"
	"net"
	"strings"

	"github.com/Masterminds/semver/v3"
	"oras.land/oras-go/v2/registry"
)

// Scheme prefixes a plugin source in an agent file.
const Scheme = "oci://"

// Ref is a plugin source: oci://REGISTRY/REPOSITORY with a tag, a digest,
// or a semver constraint resolved against the repository's tags.
type Ref struct {
	// Registry is host[:port]; Repository the path inside it.
	Registry, Repository string
	// Tag, Digest or Constraint (at most one; none = the tag "latest").
	Tag, Digest string
	Constraint  *semver.Constraints
	// ConstraintText is the constraint as written.
	ConstraintText string
}

// ParseRef parses "oci://REGISTRY/REPO[:TAG|@sha256:HEX]"; version, when
// not empty, is a semver constraint ("~> 1.2", ">= 1.0, < 2") and the
// source then has neither tag nor digest.
func ParseRef(source, version string) (Ref, error) {
	rest, ok := strings.CutPrefix(source, Scheme)
	if !ok {
		return Ref{}, fmt.Errorf("source %q: want %sREGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]", source, Scheme)
	}
	r, err := registry.ParseReference(rest)
	if err != nil {
		return Ref{}, fmt.Errorf("source %q: %v", source, err)
	}
	out := Ref{Registry: r.Registry, Repository: r.Repository}
	if strings.HasPrefix(r.Reference, "sha256:") {
		out.Digest = r.Reference
	} else {
		out.Tag = r.Reference
	}
	if version != "" {
		if out.Tag != "" || out.Digest != "" {
			return Ref{}, fmt.Errorf("source %q: a version constraint (%q) goes with a source without tag or digest", source, version)
		}
		c, err := semver.NewConstraint(terraformStyle(version))
		if err != nil {
			return Ref{}, fmt.Errorf("source %q: version %q: %v", source, version, err)
		}
		out.Constraint, out.ConstraintText = c, version
	}
	if out.Tag == "" && out.Digest == "" && out.Constraint == nil {
		out.Tag = "latest"
	}
	return out, nil
}

// terraformStyle rewrites the pessimistic operator "~> 1.2" (Terraform's:
// >= 1.2, < 2.0; "~> 1.2.3": >= 1.2.3, < 1.3.0) into semver ranges.
func terraformStyle(v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		rest, ok := strings.CutPrefix(p, "~>")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		ver, err := semver.NewVersion(rest)
		if err != nil {
			continue // the parser names the bad version
		}
		var upper string
		if strings.Count(strings.TrimPrefix(rest, "v"), ".") >= 2 {
			upper = fmt.Sprintf("%d.%d.0", ver.Major(), ver.Minor()+1)
		} else {
			upper = fmt.Sprintf("%d.0.0", ver.Major()+1)
		}
		parts[i] = fmt.Sprintf(">= %s, < %s", rest, upper)
	}
	return strings.Join(parts, ", ")
}

// Repo is REGISTRY/REPOSITORY.
func (r Ref) Repo() string { return r.Registry + "/" + r.Repository }

// String is the source as an oci:// reference.
func (r Ref) String() string {
	switch {
	case r.Digest != "":
		return Scheme + r.Repo() + "@" + r.Digest
	case r.Constraint != nil:
		return Scheme + r.Repo() + " (version " + r.ConstraintText + ")"
	}
	return Scheme + r.Repo() + ":" + r.Tag
}

// Loopback reports whether the registry is on this machine: reached over
// plain HTTP without --plain-http.
func (r Ref) Loopback() bool {
	host := r.Registry
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
