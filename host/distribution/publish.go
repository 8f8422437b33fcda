package distribution

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
)

// Media types of a plugin artifact.
const (
	ArtifactType    = "application/vnd.kosong-host.plugin.v1"
	ConfigMediaType = "application/vnd.kosong-host.plugin.config.v1+json"
	BinaryMediaType = "application/vnd.kosong-host.plugin.binary.v1"
	// AnnotationTools lists the plugin's tools on the index, comma-separated,
	// so a registry page shows them.
	AnnotationTools = "dev.kosong-host.plugin.tools"
)

// Config is a platform manifest's config blob.
type Config struct {
	Platform string `json:"platform"`
	// Describe is the plugin's Describe answer (its tools, their schemas,
	// capabilities and annotations, the SDK's protocol version), as JSON;
	// empty when it could not be asked (a binary for another platform).
	Describe json.RawMessage `json:"describe,omitempty"`
}

// Binary is one platform's plugin binary to publish.
type Binary struct {
	Platform string // os/arch, e.g. linux/amd64
	Path     string
}

// ParsePlatform splits "os/arch[/variant]".
func ParsePlatform(s string) (ocispec.Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return ocispec.Platform{}, fmt.Errorf("platform %q: want OS/ARCH, e.g. linux/amd64", s)
	}
	p := ocispec.Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// PlatformString is "os/arch[/variant]".
func PlatformString(p *ocispec.Platform) string {
	if p == nil {
		return ""
	}
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// Publish pushes the binaries as one image index tagged tag in t, with
// describe (the plugin's Describe answer, JSON; may be nil) in each
// platform's config blob and tools on the index. It returns the index's
// descriptor.
func Publish(ctx context.Context, t Target, tag string, bins []Binary, describe json.RawMessage, tools []string, version string) (ocispec.Descriptor, error) {
	if len(bins) == 0 {
		return ocispec.Descriptor{}, fmt.Errorf("publish: no --platform given")
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].Platform < bins[j].Platform })
	var manifests []ocispec.Descriptor
	seen := map[string]bool{}
	for _, b := range bins {
		plat, err := ParsePlatform(b.Platform)
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		if seen[b.Platform] {
			return ocispec.Descriptor{}, fmt.Errorf("platform %s given twice", b.Platform)
		}
		seen[b.Platform] = true
		layer, err := pushFile(ctx, t, b.Path)
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		cfg, _ := json.Marshal(Config{Platform: b.Platform, Describe: describe})
		cfgDesc := descriptor(ConfigMediaType, cfg)
		if err := pushBytes(ctx, t, cfgDesc, cfg); err != nil {
			return ocispec.Descriptor{}, err
		}
		m := ocispec.Manifest{
			Versioned:    specs.Versioned{SchemaVersion: 2},
			MediaType:    ocispec.MediaTypeImageManifest,
			ArtifactType: ArtifactType,
			Config:       cfgDesc,
			Layers:       []ocispec.Descriptor{layer},
		}
		mb, _ := json.Marshal(m)
		md := descriptor(ocispec.MediaTypeImageManifest, mb)
		md.ArtifactType = ArtifactType
		if err := pushBytes(ctx, t, md, mb); err != nil {
			return ocispec.Descriptor{}, err
		}
		md.Platform = &plat
		manifests = append(manifests, md)
	}
	ann := map[string]string{}
	if len(tools) > 0 {
		ann[AnnotationTools] = strings.Join(tools, ",")
	}
	if version != "" {
		ann[ocispec.AnnotationVersion] = version
	}
	idx := ocispec.Index{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageIndex,
		ArtifactType: ArtifactType,
		Manifests:    manifests,
		Annotations:  ann,
	}
	ib, _ := json.Marshal(idx)
	id := descriptor(ocispec.MediaTypeImageIndex, ib)
	if err := pushBytes(ctx, t, id, ib); err != nil {
		return ocispec.Descriptor{}, err
	}
	if err := t.Tag(ctx, id, tag); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("tag %s: %s", tag, explain(err))
	}
	return id, nil
}

func descriptor(mediaType string, b []byte) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
}

func pushBytes(ctx context.Context, t Target, d ocispec.Descriptor, b []byte) error {
	if ok, err := t.Exists(ctx, d); err == nil && ok {
		return nil
	}
	if err := t.Push(ctx, d, bytes.NewReader(b)); err != nil && !isExists(err) {
		return fmt.Errorf("push %s: %s", d.Digest, explain(err))
	}
	return nil
}

func isExists(err error) bool {
	return err != nil && (err == errdef.ErrAlreadyExists || strings.Contains(err.Error(), errdef.ErrAlreadyExists.Error()))
}

func pushFile(ctx context.Context, t Target, path string) (ocispec.Descriptor, error) {
	f, err := os.Open(path)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if !fi.Mode().IsRegular() {
		return ocispec.Descriptor{}, fmt.Errorf("%s is not a file", path)
	}
	dg, err := digest.SHA256.FromReader(f)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %v", path, err)
	}
	d := ocispec.Descriptor{MediaType: BinaryMediaType, Digest: dg, Size: fi.Size()}
	if ok, err := t.Exists(ctx, d); err == nil && ok {
		return d, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ocispec.Descriptor{}, err
	}
	if err := t.Push(ctx, d, f); err != nil && !isExists(err) {
		return ocispec.Descriptor{}, fmt.Errorf("push %s: %s", path, explain(err))
	}
	return d, nil
}
