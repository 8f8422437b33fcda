package distribution

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// Target is where plugin artifacts are kept: a registry repository or an
// OCI image layout directory.
type Target interface {
	oras.GraphTarget
	Tags(ctx context.Context, last string, fn func(tags []string) error) error
}

// Options say how to reach a registry.
type Options struct {
	// PlainHTTP reaches a registry that is not on a loopback address over
	// HTTP (a loopback registry always is).
	PlainHTTP bool
	// HTTPClient, when set, sends the requests (tests); else a client with
	// retries.
	HTTPClient *http.Client
	// DockerConfig is the docker config file holding credentials or naming
	// credential helpers; "" is the usual one ($DOCKER_CONFIG/config.json,
	// ~/.docker/config.json).
	DockerConfig string
}

// Remote is the registry repository of ref, with credentials from the
// docker config and its credential helpers.
func Remote(ref Ref, opts Options) (Target, error) {
	repo, err := remote.NewRepository(ref.Repo())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ref, err)
	}
	repo.PlainHTTP = opts.PlainHTTP || ref.Loopback()
	client := opts.HTTPClient
	if client == nil {
		client = retry.DefaultClient
	}
	var store credentials.Store
	if opts.DockerConfig != "" {
		store, err = credentials.NewStore(opts.DockerConfig, credentials.StoreOptions{})
	} else {
		store, err = credentials.NewStoreFromDocker(credentials.StoreOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: docker credentials: %v", ref, err)
	}
	repo.Client = &auth.Client{Client: client, Cache: auth.NewCache(), Credential: credentials.Credential(store)}
	return repo, nil
}

// Layout is the OCI image layout directory holding ref's repository
// inside the mirror directory dir: DIR/REGISTRY/REPOSITORY.
func Layout(dir string, ref Ref) (Target, error) {
	path := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(ref.Registry, ":", "_")), filepath.FromSlash(ref.Repository))
	st, err := oci.New(path)
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %v", path, err)
	}
	return st, nil
}

// LayoutExists reports whether the mirror directory dir holds ref's
// repository.
func LayoutExists(dir string, ref Ref) bool {
	path := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(ref.Registry, ":", "_")), filepath.FromSlash(ref.Repository), "oci-layout")
	_, err := os.Stat(path)
	return err == nil
}

// explain turns a registry error into a short reason: a status code and
// what it means.
func explain(err error) string {
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		what := ""
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			what = " (not authorised: log in with `docker login` or a credential helper)"
		case http.StatusNotFound:
			what = " (not found)"
		}
		if resp.StatusCode >= 500 {
			what = " (registry error)"
		}
		return fmt.Sprintf("%s %s: HTTP %d%s", resp.Method, resp.URL.Redacted(), resp.StatusCode, what)
	}
	if errors.Is(err, errdef.ErrNotFound) {
		return "not found"
	}
	s := err.Error()
	if strings.Contains(s, "credential not found") {
		return s + " (not authorised: log in with `docker login` or set a credential helper)"
	}
	return strings.ReplaceAll(s, "\n", " ")
}
