package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/policy"
	"github.com/kosong-host/kosong-host/host/signing"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/providers/config"
)

// trustRule is a rule requiring signatures, with where it was written.
type trustRule struct {
	policy.TrustRule
	// where names the rule: "plugin_trust[0] of FILE" or
	// "required_signers[0] of the admin policy FILE".
	where string
	keys  []signing.TrustedKey
}

// adminPolicy is the admin policy in force.
func adminPolicy() (*policy.Policy, error) {
	return policy.Load(policy.Path(os.Getenv))
}

// trustRules are the configuration's plugin_trust rules and the admin
// policy's required_signers, their keys read.
func trustRules(cfg *config.File, pol *policy.Policy) ([]trustRule, error) {
	var rules []trustRule
	if cfg.PluginTrust != nil {
		var rs []policy.TrustRule
		if err := cfg.PluginTrust.Decode(&rs); err != nil {
			return nil, fmt.Errorf("config %s: line %d: plugin_trust: want a list of {repositories: [...], keys: [...]}", cfg.Path, cfg.PluginTrust.Line)
		}
		for i, r := range rs {
			rules = append(rules, trustRule{TrustRule: r, where: fmt.Sprintf("plugin_trust[%d] of %s", i, cfg.Path)})
		}
	}
	for i, r := range pol.RequiredSigners {
		rules = append(rules, trustRule{TrustRule: r, where: fmt.Sprintf("required_signers[%d] of the admin policy %s", i, pol.Path)})
	}
	for i := range rules {
		base := filepath.Dir(cfg.Path)
		if strings.HasPrefix(rules[i].where, "required_signers") {
			base = filepath.Dir(pol.Path)
		}
		for _, k := range rules[i].Keys {
			if !filepath.IsAbs(k) {
				k = filepath.Join(base, k)
			}
			tk, err := signing.LoadPublicKey(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", rules[i].where, err)
			}
			rules[i].keys = append(rules[i].keys, tk)
		}
	}
	return rules, nil
}

// sourceVerifier checks, before anything is cached, that each artifact is
// signed as every trust rule covering its repository requires.
func (g *globals) sourceVerifier(cfg *config.File) (distribution.Verifier, error) {
	pol, err := adminPolicy()
	if err != nil {
		return nil, err
	}
	rules, err := trustRules(cfg, pol)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, t distribution.Target, ref distribution.Ref, index ocispec.Descriptor) error {
		for _, r := range rules {
			if !r.Matches(ref.Repo()) {
				continue
			}
			if _, err := signing.Verify(ctx, t, index, r.keys); err != nil {
				return &distribution.Refusal{Msg: fmt.Sprintf("%s (%s) is refused: %v; rule %s (repositories %s) requires a signature by %s",
					ref, index.Digest, err, r.where, strings.Join(r.Repositories, ", "), strings.Join(r.Keys, ", "))}
			}
		}
		return nil
	}, nil
}

// checkSourcePolicy applies the admin policy to a plugin with a source:
// its repository must be allowed, and a project agent file may add it only
// where the policy lets it.
func (g *globals) checkSourcePolicy(ref spec.PluginRef, r distribution.Ref) error {
	pol, err := adminPolicy()
	if err != nil {
		return err
	}
	if err := pol.CheckSource(r.Repo()); err != nil {
		return fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	if file := g.projectFile(ref); file != "" {
		if err := pol.CheckProjectPlugin(ref.Name, file); err != nil {
			return err
		}
	}
	return nil
}

// projectFile is the project agent file that names ref, if any.
func (g *globals) projectFile(ref spec.PluginRef) string {
	for _, r := range ref.Refs {
		if g.isProjectFile(r.File) {
			return r.File
		}
	}
	return ""
}

// signingKey is a private key publish signs with.
type signingKey struct{ key *signing.Key }

func loadSigningKey(path string) (*signingKey, error) {
	k, err := signing.LoadKey(path)
	if err != nil {
		return nil, err
	}
	return &signingKey{k}, nil
}

func (k *signingKey) sign(ctx context.Context, t distribution.Target, ref distribution.Ref, d ocispec.Descriptor) (string, error) {
	return signing.Sign(ctx, t, ref.Repo(), d, k.key)
}

func newPluginsKeygenCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "keygen PREFIX",
		Short: "Write a signing key pair: PREFIX.key (private, mode 0600) and PREFIX.pub (public, for trust rules)",
		Long: "Writes an ECDSA P-256 key pair: PREFIX.key, the private key (PKCS#8 PEM, not encrypted: keep it in\n" +
			"a secret store, e.g. a CI secret) for `plugins publish --sign PREFIX.key`, and PREFIX.pub, the\n" +
			"public key that plugin_trust or the admin policy's required_signers list (`cosign verify --key\n" +
			"PREFIX.pub` accepts it too).",
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			priv, pub, err := signing.GenerateKey()
			if err != nil {
				return exitCode(1, err)
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			for _, f := range []struct {
				path string
				data []byte
				mode os.FileMode
			}{{args[0] + ".key", priv, 0o600}, {args[0] + ".pub", pub, 0o644}} {
				w, err := os.OpenFile(f.path, flags, f.mode)
				if errors.Is(err, os.ErrExist) {
					return exitCode(2, fmt.Errorf("%s exists: not overwritten (--force overwrites)", f.path))
				}
				if err != nil {
					return exitCode(2, err)
				}
				_, err = w.Write(f.data)
				if cerr := w.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return exitCode(1, err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s.key (private: keep it secret) and %s.pub\n", args[0], args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite existing files")
	return cmd
}
