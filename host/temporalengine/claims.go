package temporalengine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/kosong-host/kosong-host/providers"
)

// DefaultClaimOver is the size (of its JSON encoding) above which a tool
// message is stored out of the workflow history, well under Temporal's
// 2 MB payload limit.
const DefaultClaimOver = 1 << 20

// ErrorClaimCheck is the type of the application error of a model
// request whose history names a claim check that cannot be read.
const ErrorClaimCheck = "ClaimCheckError"

// claimRef is the text a stored tool message is replaced with in the
// workflow history: the reference the model request reads it back by.
var claimRef = regexp.MustCompile(`^\[kosong claim check sha256:([0-9a-f]{64}), [0-9]+ bytes: the tool's output is stored out of the workflow history\]$`)

// claims stores large tool messages in a folder of dir per session
// (claimclean.go), one file per content (dir/SESSION/SHA256.json, the
// hash of the file's content), and reads them back.
type claims struct {
	dir  string
	over int
}

// store returns m, or when its encoding is larger than c.over, a tool
// message that refers to the file it is stored in, in session's folder.
func (c claims) store(session string, m providers.Message) (providers.Message, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return m, err
	}
	over := c.over
	if over <= 0 {
		over = DefaultClaimOver
	}
	if len(b) <= over {
		return m, nil
	}
	if c.dir == "" {
		return m, fmt.Errorf("the tool's output (%d bytes) is over %d bytes and the worker has no claim-check directory", len(b), over)
	}
	sum := sha256.Sum256(b)
	name := hex.EncodeToString(sum[:])
	folder := c.folder(session)
	path := filepath.Join(folder, name+".json")
	if _, err := os.Stat(path); err != nil {
		if err := os.MkdirAll(folder, 0o700); err != nil {
			return m, fmt.Errorf("claim-check directory: %w", err)
		}
		tmp, err := os.CreateTemp(folder, name+".*.tmp")
		if err != nil {
			return m, fmt.Errorf("claim check: %w", err)
		}
		_, werr := tmp.Write(b)
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), path)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return m, fmt.Errorf("claim check %s: %w", path, werr)
		}
	}
	text := fmt.Sprintf("[kosong claim check sha256:%s, %d bytes: the tool's output is stored out of the workflow history]", name, len(b))
	return providers.Message{Role: providers.RoleTool, ToolCallID: m.ToolCallID, IsError: m.IsError,
		Content: []providers.ContentPart{providers.TextPart(text)}}, nil
}

// claimOf is the hash a tool message refers to ("" when it is no claim check).
func claimOf(m providers.Message) string {
	// Parts after the reference (the repeat guard's reminder) are kept.
	if m.Role != providers.RoleTool || len(m.Content) == 0 || m.Content[0].Type != providers.PartText {
		return ""
	}
	if s := claimRef.FindStringSubmatch(m.Content[0].Text); s != nil {
		return s[1]
	}
	return ""
}

// resolve returns history with the claim checks' messages read back
// from session's folder (or dir itself, where older workers stored them);
// a missing or altered file is a non-retryable error naming it. A file
// read is touched: the sweep of old claims (--claim-ttl) counts from its
// last use.
func (c claims) resolve(session string, history []providers.Message) ([]providers.Message, error) {
	var out []providers.Message
	for i, m := range history {
		name := claimOf(m)
		if name == "" {
			continue
		}
		if out == nil {
			out = append([]providers.Message(nil), history...)
		}
		path := filepath.Join(c.folder(session), name+".json")
		if _, err := os.Stat(path); err != nil {
			if flat := filepath.Join(c.dir, name+".json"); c.dir != "" && fileExists(flat) {
				path = flat
			}
		}
		fail := func(err error) error {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("claim check %s of tool call %s: %v", path, m.ToolCallID, err), ErrorClaimCheck, nil)
		}
		if c.dir == "" {
			return nil, fail(fmt.Errorf("the worker has no claim-check directory"))
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fail(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != name {
			return nil, fail(fmt.Errorf("the file's content does not match its hash"))
		}
		var stored providers.Message
		if err := json.Unmarshal(b, &stored); err != nil {
			return nil, fail(err)
		}
		stored.Content = append(stored.Content, m.Content[1:]...)
		now := time.Now()
		_ = os.Chtimes(path, now, now)
		out[i] = stored
	}
	if out == nil {
		return history, nil
	}
	return out, nil
}
