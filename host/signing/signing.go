// Package signing signs and verifies plugin artifacts with Sigstore's
// formats (github.com/sigstore/sigstore-go), offline with a key pair: a
// Sigstore bundle (v0.3) holding a DSSE envelope over an in-toto
// statement whose subject is the artifact's digest, attached to the
// artifact as an OCI 1.1 referrer, the layout `cosign sign
// --new-bundle-format` writes, so `cosign verify --key` can check it.
package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
)

// Media types and annotations of a signature, as cosign writes them.
const (
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	PredicateType   = "https://sigstore.dev/cosign/sign/v1"
	statementType   = "https://in-toto.io/Statement/v1"
	payloadType     = "application/vnd.in-toto+json"
)

// GenerateKey makes an ECDSA P-256 key pair: the private key as PKCS#8
// PEM, the public key as PKIX PEM.
func GenerateKey() (private, public []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	pub, err := cryptoutils.MarshalPublicKeyToPEM(k.Public())
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), pub, nil
}

// Key is a private signing key.
type Key struct {
	priv *ecdsa.PrivateKey
	hint []byte
}

// LoadKey reads a private key written by GenerateKey.
func LoadKey(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %v", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("signing key %s: not a PEM private key (want one from `kosong-host plugins keygen`)", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %v", path, err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("signing key %s: want an ECDSA P-256 key", path)
	}
	der, _ := x509.MarshalPKIXPublicKey(ec.Public())
	sum := sha256.Sum256(der)
	return &Key{priv: ec, hint: []byte(base64.StdEncoding.EncodeToString(sum[:]))}, nil
}

// The sign.Keypair methods.
func (k *Key) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (k *Key) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (k *Key) GetHint() []byte                { return k.hint }
func (k *Key) GetKeyAlgorithm() string        { return "ECDSA" }
func (k *Key) GetPublicKey() crypto.PublicKey { return k.priv.Public() }
func (k *Key) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.priv.Public())
	return string(b), err
}
func (k *Key) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, sum[:])
	return sig, sum[:], err
}

type statement struct {
	Type          string    `json:"_type"`
	Subject       []subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     struct{}  `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Sign signs the artifact d of repository repo (REGISTRY/REPOSITORY) in t
// and attaches the signature as a referrer; it returns the signature
// manifest's digest.
func Sign(ctx context.Context, t oras.Target, repo string, d ocispec.Descriptor, k *Key) (string, error) {
	st := statement{Type: statementType, PredicateType: PredicateType,
		Subject: []subject{{Name: repo, Digest: map[string]string{"sha256": d.Digest.Encoded()}}}}
	payload, _ := json.Marshal(st)
	b, err := sign.Bundle(&sign.DSSEData{Data: payload, PayloadType: payloadType}, k, sign.BundleOptions{Context: ctx})
	if err != nil {
		return "", err
	}
	bj, err := (&bundle.Bundle{Bundle: b}).MarshalJSON()
	if err != nil {
		return "", err
	}
	layer := content.NewDescriptorFromBytes(BundleMediaType, bj)
	if err := t.Push(ctx, layer, bytes.NewReader(bj)); err != nil && !strings.Contains(err.Error(), "already exists") {
		return "", err
	}
	subj := ocispec.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size}
	m, err := oras.PackManifest(ctx, t, oras.PackManifestVersion1_1, BundleMediaType, oras.PackManifestOptions{
		Subject: &subj,
		Layers:  []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{
			"dev.sigstore.bundle.content":       "dsse-envelope",
			"dev.sigstore.bundle.predicateType": PredicateType,
			ocispec.AnnotationCreated:           time.Now().UTC().Format(time.RFC3339),
		},
	})
	if err != nil {
		return "", err
	}
	return m.Digest.String(), nil
}

// TrustedKey is a public key a trust rule names.
type TrustedKey struct {
	Name     string // the file it was read from, for messages
	verifier signature.Verifier
}

// LoadPublicKey reads a PEM public key.
func LoadPublicKey(path string) (TrustedKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return TrustedKey{}, fmt.Errorf("public key: %v", err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(b)
	if err != nil {
		return TrustedKey{}, fmt.Errorf("public key %s: %v", path, err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return TrustedKey{}, fmt.Errorf("public key %s: %v", path, err)
	}
	return TrustedKey{Name: path, verifier: v}, nil
}

// ErrUnsigned is Verify's error for an artifact without signatures.
var ErrUnsigned = errors.New("unsigned")

// Verify looks for a signature of d (a referrer holding a Sigstore
// bundle) made by one of keys; it returns the key that made it, or
// ErrUnsigned, or an error saying no listed key signed it.
func Verify(ctx context.Context, t oras.ReadOnlyGraphTarget, d ocispec.Descriptor, keys []TrustedKey) (TrustedKey, error) {
	refs, err := referrers(ctx, t, d)
	if err != nil {
		return TrustedKey{}, err
	}
	if len(refs) == 0 {
		return TrustedKey{}, ErrUnsigned
	}
	want, _ := hex.DecodeString(d.Digest.Encoded())
	var reasons []string
	bundles := 0
	for _, r := range refs {
		mb, err := content.FetchAll(ctx, t, r)
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		var m ocispec.Manifest
		if json.Unmarshal(mb, &m) != nil || len(m.Layers) != 1 || m.Layers[0].MediaType != BundleMediaType {
			continue
		}
		bundles++
		bj, err := content.FetchAll(ctx, t, m.Layers[0])
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		var b bundle.Bundle
		if err := b.UnmarshalJSON(bj); err != nil {
			reasons = append(reasons, "a signature that is not a Sigstore bundle")
			continue
		}
		for _, k := range keys {
			tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
				return root.NewExpiringKey(k.verifier, time.Time{}, time.Time{}), nil
			})
			v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
			if err != nil {
				return TrustedKey{}, err
			}
			if _, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", want), verify.WithKey())); err == nil {
				return k, nil
			}
		}
		reasons = append(reasons, "a signature by a key the rule does not list")
	}
	if bundles == 0 && len(reasons) == 0 {
		return TrustedKey{}, ErrUnsigned
	}
	return TrustedKey{}, fmt.Errorf("signed, but not by a listed key (%s)", strings.Join(unique(reasons), "; "))
}

func unique(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// referrers lists the signatures attached to d.
func referrers(ctx context.Context, t oras.ReadOnlyGraphTarget, d ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	preds, err := t.Predecessors(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []ocispec.Descriptor
	for _, p := range preds {
		// An OCI layout does not record a referrer's artifact type: Verify
		// reads the manifest of each.
		if p.ArtifactType == BundleMediaType || (p.ArtifactType == "" && p.MediaType == ocispec.MediaTypeImageManifest) {
			out = append(out, p)
		}
	}
	return out, nil
}
