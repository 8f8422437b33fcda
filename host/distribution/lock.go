package distribution

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"oras.land/oras-go/v2"
)

// Lock resolves ref in t and records the index digest and, for each of
// platforms, the manifest digest and binary sha256: a lock entry that a
// machine on any of those platforms verifies its install against.
func Lock(ctx context.Context, t Target, ref Ref, platforms []string) (Pin, error) {
	version, d, err := ResolveIndex(ctx, t, ref)
	if err != nil {
		return Pin{}, err
	}
	entries, err := Platforms(ctx, t, d)
	if err != nil {
		return Pin{}, fmt.Errorf("%s: %v", ref, err)
	}
	pin := Pin{Version: version, Index: d.Digest.String(), Platforms: map[string]PlatformPin{}}
	for _, p := range platforms {
		e, ok := entries[p]
		if !ok {
			have := make([]string, 0, len(entries))
			for h := range entries {
				have = append(have, h)
			}
			sort.Strings(have)
			return Pin{}, fmt.Errorf("%s (%s): no %s binary in the index (it has %s)", ref, d.Digest, p, strings.Join(have, ", "))
		}
		pin.Platforms[p] = PlatformPin{Manifest: e.Manifest.Digest.String(), SHA256: e.Binary.Digest.Encoded()}
	}
	return pin, nil
}

// Mirror copies the artifact index (a digest) of ref, every platform and
// its signatures (referrers) included, from src into the OCI image layout
// for ref's repository under dir, tagged with ref's tag (or the version
// it resolved to) so the mirror answers the same source.
func Mirror(ctx context.Context, src Target, ref Ref, index, tag, dir string) error {
	dst, err := Layout(dir, ref)
	if err != nil {
		return err
	}
	if tag == "" {
		tag = ref.Tag
	}
	if tag == "" {
		tag = strings.TrimPrefix(index, "sha256:")
	}
	opts := oras.DefaultExtendedCopyOptions
	root, err := oras.ExtendedCopy(ctx, src, index, dst, tag, opts)
	if err != nil {
		return fmt.Errorf("mirror %s into %s: %s", ref, dir, explain(err))
	}
	// The layout's index.json lists tagged manifests only: tag each
	// referrer (a signature) so that it is found again.
	preds, err := dst.Predecessors(ctx, root)
	if err != nil {
		return fmt.Errorf("mirror %s into %s: %s", ref, dir, explain(err))
	}
	for _, p := range preds {
		if err := dst.Tag(ctx, p, "referrer-"+p.Digest.Encoded()); err != nil {
			return fmt.Errorf("mirror %s into %s: %s", ref, dir, explain(err))
		}
	}
	return nil
}
