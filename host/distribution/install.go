package distribution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// Pin is what a lock file records of one plugin source: the version its
// tag or constraint resolved to, the index digest, and each platform's
// manifest digest and binary sha256.
type Pin struct {
	Version   string
	Index     string
	Platforms map[string]PlatformPin
}

// PlatformPin is one platform's entry of a Pin.
type PlatformPin struct {
	Manifest string
	SHA256   string // the binary's, hex
}

// Verifier checks an artifact before anything of it is written to the
// cache (signatures, the admin policy); an error refuses it.
type Verifier func(ctx context.Context, t Target, ref Ref, index ocispec.Descriptor) error

// Installer fetches plugins into the cache.
type Installer struct {
	Cache   Cache
	Options Options
	// Mirrors are consulted before the source, in order: OCI layout
	// directories (as `plugins mirror` writes them) or registries
	// (oci://HOST, which holds the same repository paths).
	Mirrors []string
	// Verify, when set, checks each artifact before it is cached.
	Verify Verifier
	// Open reaches a source's registry; nil is Remote.
	Open func(Ref, Options) (Target, error)
}

// CurrentPlatform is this machine's os/arch.
func CurrentPlatform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// Installed is a plugin fetched into (or found in) the cache.
type Installed struct {
	Path string
	Record
	// From names where it came from: the source, a mirror, or "cache".
	From string
}

func recordKey(ref Ref, platform string) string { return ref.String() + " " + platform }

// pinned is the reference to fetch for ref under pin: a version
// constraint is held to the locked version (which must meet it).
func pinned(ref Ref, pin *Pin) (Ref, error) {
	if pin == nil || ref.Constraint == nil {
		return ref, nil
	}
	v, err := semver.NewVersion(pin.Version)
	if err != nil || !ref.Constraint.Check(v) {
		return ref, &Refusal{fmt.Sprintf("%s: the lock file's version %q does not meet the constraint: run `kosong-host plugins lock`", ref, pin.Version)}
	}
	out := ref
	out.Constraint, out.ConstraintText, out.Tag = nil, "", pin.Version
	return out, nil
}

// Cached is the installed binary of ref for platform, if the cache holds
// a whole one (a corrupt entry is removed and reported missing). With a
// pin, the cached install must match it.
func (in *Installer) Cached(ref Ref, platform string, pin *Pin) (Installed, bool) {
	return in.cached(recordKey(ref, platform), platform, pin)
}

func (in *Installer) cached(key, platform string, pin *Pin) (Installed, bool) {
	rec, ok := in.Cache.Record(key)
	if !ok {
		return Installed{}, false
	}
	if pin != nil {
		pp, ok := pin.Platforms[platform]
		if rec.Index != pin.Index || !ok || rec.Manifest != pp.Manifest || rec.Binary != "sha256:"+pp.SHA256 {
			return Installed{}, false
		}
	}
	d := digest.Digest(rec.Binary)
	if !in.Cache.Valid(d) {
		return Installed{}, false
	}
	return Installed{Path: in.Cache.BinaryPath(d), Record: rec, From: "cache"}, true
}

// Install fetches ref's binary for platform into the cache, from a mirror
// or the source, verified (digests, pin, Verify); a source that cannot be
// reached falls back to a cached install.
func (in *Installer) Install(ctx context.Context, ref Ref, platform string, pin *Pin) (Installed, error) {
	key := recordKey(ref, platform)
	ref, err := pinned(ref, pin)
	if err != nil {
		return Installed{}, err
	}
	var errs []string
	for _, m := range in.Mirrors {
		t, err := in.mirror(m, ref)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if t == nil {
			continue
		}
		got, err := in.installFrom(ctx, t, ref, key, platform, pin, "mirror "+m)
		if err == nil {
			return got, nil
		}
		var refused *Refusal
		if errors.As(err, &refused) {
			return Installed{}, err
		}
		errs = append(errs, fmt.Sprintf("mirror %s: %v", m, err))
	}
	open := in.Open
	if open == nil {
		open = Remote
	}
	t, err := open(ref, in.Options)
	if err != nil {
		return Installed{}, err
	}
	got, err := in.installFrom(ctx, t, ref, key, platform, pin, ref.String())
	if err == nil {
		return got, nil
	}
	var unreachable *unreachableError
	if errors.As(err, &unreachable) {
		if c, ok := in.cached(key, platform, pin); ok {
			return c, nil
		}
		errs = append(errs, err.Error()+"; and the plugin cache "+in.Cache.Dir+" has no copy (install it where the registry is reachable, or set plugin_mirrors)")
		return Installed{}, errors.New(strings.Join(errs, "; "))
	}
	return Installed{}, err
}

// mirror opens mirror m for ref: nil when a directory mirror does not
// hold the repository.
func (in *Installer) mirror(m string, ref Ref) (Target, error) {
	if host, ok := strings.CutPrefix(m, Scheme); ok {
		mref := ref
		mref.Registry = strings.TrimSuffix(host, "/")
		open := in.Open
		if open == nil {
			open = Remote
		}
		return open(mref, in.Options)
	}
	if !LayoutExists(m, ref) {
		return nil, nil
	}
	return Layout(m, ref)
}

// unreachableError is a registry that could not be reached at all.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }

// Refusal is an artifact refused by a check (signature, policy, lock):
// never retried elsewhere.
type Refusal struct{ Msg string }

func (e *Refusal) Error() string { return e.Msg }

func (in *Installer) installFrom(ctx context.Context, t Target, ref Ref, key, platform string, pin *Pin, from string) (Installed, error) {
	version, idxDesc, err := ResolveIndex(ctx, t, ref)
	if err != nil {
		return Installed{}, err
	}
	if ref.Constraint != nil {
		// Messages name the tag the constraint resolved to.
		ref.Constraint, ref.ConstraintText, ref.Tag = nil, "", version
	}
	if pin != nil && pin.Index != idxDesc.Digest.String() {
		return Installed{}, &Refusal{fmt.Sprintf("%s: the lock file pins index %s, the registry has %s: the tag moved; if that is intended run `kosong-host plugins lock`",
			ref, pin.Index, idxDesc.Digest)}
	}
	entries, err := Platforms(ctx, t, idxDesc)
	if err != nil {
		return Installed{}, fmt.Errorf("%s: %v", ref, err)
	}
	e, ok := entries[platform]
	if !ok {
		have := make([]string, 0, len(entries))
		for p := range entries {
			have = append(have, p)
		}
		sort.Strings(have)
		return Installed{}, fmt.Errorf("%s (%s): no %s binary in the index (it has %s)", ref, idxDesc.Digest, platform, strings.Join(have, ", "))
	}
	if pin != nil {
		pp, ok := pin.Platforms[platform]
		switch {
		case !ok:
			return Installed{}, &Refusal{fmt.Sprintf("%s: the lock file has no %s entry: run `kosong-host plugins lock --platform %s`", ref, platform, platform)}
		case pp.Manifest != e.Manifest.Digest.String() || "sha256:"+pp.SHA256 != e.Binary.Digest.String():
			return Installed{}, &Refusal{fmt.Sprintf("%s: %s manifest %s does not match the lock file's %s", ref, platform, e.Manifest.Digest, pp.Manifest)}
		}
	}
	if in.Verify != nil {
		if err := in.Verify(ctx, t, ref, idxDesc); err != nil {
			return Installed{}, err
		}
	}
	rec := Record{Source: ref.String(), Version: version, Index: idxDesc.Digest.String(), Platform: platform,
		Manifest: e.Manifest.Digest.String(), Binary: e.Binary.Digest.String()}
	if !in.Cache.Valid(e.Binary.Digest) {
		rc, err := t.Fetch(ctx, e.Binary)
		if err != nil {
			return Installed{}, fmt.Errorf("%s: fetch %s: %s", ref, e.Binary.Digest, explain(err))
		}
		vr := content.NewVerifyReader(rc, e.Binary)
		_, err = in.Cache.put(e.Binary.Digest, vr, vr.Verify)
		rc.Close()
		if err != nil {
			return Installed{}, fmt.Errorf("%s: binary %s: %v (nothing was cached)", ref, e.Binary.Digest, err)
		}
	}
	if err := in.Cache.saveRecord(key, rec); err != nil {
		return Installed{}, fmt.Errorf("plugin cache: %v", err)
	}
	return Installed{Path: in.Cache.BinaryPath(e.Binary.Digest), Record: rec, From: from}, nil
}

// ResolveIndex resolves ref in t: its tag, its digest, or the highest tag
// meeting its constraint. It returns the version (the tag) and the
// index's descriptor.
func ResolveIndex(ctx context.Context, t Target, ref Ref) (string, ocispec.Descriptor, error) {
	name, version := ref.Tag, ref.Tag
	switch {
	case ref.Digest != "":
		name, version = ref.Digest, ""
	case ref.Constraint != nil:
		v, err := highest(ctx, t, ref)
		if err != nil {
			return "", ocispec.Descriptor{}, err
		}
		name, version = v, v
	}
	d, err := t.Resolve(ctx, name)
	if err != nil {
		return "", ocispec.Descriptor{}, wrapReach(fmt.Errorf("%s: resolve %s: %s", ref, name, explain(err)), err)
	}
	if d.MediaType != ocispec.MediaTypeImageIndex {
		return "", ocispec.Descriptor{}, fmt.Errorf("%s: %s is a %s, not a plugin's image index", ref, name, d.MediaType)
	}
	return version, d, nil
}

// wrapReach marks an error that came from not reaching the registry.
func wrapReach(msg, err error) error {
	if isNetwork(err) {
		return &unreachableError{msg}
	}
	return msg
}

func isNetwork(err error) bool {
	s := err.Error()
	for _, w := range []string{"connection refused", "no such host", "i/o timeout", "network is unreachable", "dial tcp", "connection reset"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func highest(ctx context.Context, t Target, ref Ref) (string, error) {
	var best *semver.Version
	var bestTag string
	err := t.Tags(ctx, "", func(tags []string) error {
		for _, tag := range tags {
			v, err := semver.NewVersion(tag)
			if err != nil || !ref.Constraint.Check(v) {
				continue
			}
			if best == nil || v.GreaterThan(best) {
				best, bestTag = v, tag
			}
		}
		return nil
	})
	if err != nil {
		return "", wrapReach(fmt.Errorf("%s: list tags: %s", ref, explain(err)), err)
	}
	if best == nil {
		return "", fmt.Errorf("%s: no tag meets version %q", ref, ref.ConstraintText)
	}
	return bestTag, nil
}

// Entry is one platform's manifest in an index.
type Entry struct {
	Manifest ocispec.Descriptor
	Binary   ocispec.Descriptor
	Config   ocispec.Descriptor
}

// ReadIndex fetches and decodes an index, verifying its digest.
func ReadIndex(ctx context.Context, t Target, d ocispec.Descriptor) (ocispec.Index, error) {
	var idx ocispec.Index
	b, err := content.FetchAll(ctx, t, d)
	if err != nil {
		return idx, fmt.Errorf("index %s: %s", d.Digest, explain(err))
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return idx, fmt.Errorf("index %s: %v", d.Digest, err)
	}
	return idx, nil
}

// Platforms reads the index d and each platform's manifest.
func Platforms(ctx context.Context, t Target, d ocispec.Descriptor) (map[string]Entry, error) {
	idx, err := ReadIndex(ctx, t, d)
	if err != nil {
		return nil, err
	}
	out := map[string]Entry{}
	for _, md := range idx.Manifests {
		if md.Platform == nil {
			continue
		}
		b, err := content.FetchAll(ctx, t, md)
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %s", md.Digest, explain(err))
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("manifest %s: %v", md.Digest, err)
		}
		if len(m.Layers) != 1 || m.Layers[0].MediaType != BinaryMediaType {
			return nil, fmt.Errorf("manifest %s: not a kosong-host plugin (want one layer of %s)", md.Digest, BinaryMediaType)
		}
		out[PlatformString(md.Platform)] = Entry{Manifest: md, Binary: m.Layers[0], Config: m.Config}
	}
	return out, nil
}

// Info is what `plugins info` shows of an artifact.
type Info struct {
	Ref       string           `json:"ref"`
	Version   string           `json:"version,omitempty"`
	Index     string           `json:"index"`
	Platforms map[string]Entry `json:"platforms"`
	Describe  json.RawMessage  `json:"describe,omitempty"`
	Tools     string           `json:"tools,omitempty"`
}

// ReadInfo resolves ref in t and reads its platforms and Describe output.
func ReadInfo(ctx context.Context, t Target, ref Ref) (Info, error) {
	version, d, err := ResolveIndex(ctx, t, ref)
	if err != nil {
		return Info{}, err
	}
	idx, err := ReadIndex(ctx, t, d)
	if err != nil {
		return Info{}, err
	}
	entries, err := Platforms(ctx, t, d)
	if err != nil {
		return Info{}, err
	}
	info := Info{Ref: ref.String(), Version: version, Index: d.Digest.String(), Platforms: entries, Tools: idx.Annotations[AnnotationTools]}
	for _, e := range entries {
		b, err := content.FetchAll(ctx, t, e.Config)
		if err != nil {
			return Info{}, fmt.Errorf("config %s: %s", e.Config.Digest, explain(err))
		}
		var c Config
		if json.Unmarshal(b, &c) == nil && len(c.Describe) > 0 {
			info.Describe = c.Describe
			break
		}
	}
	return info, nil
}
