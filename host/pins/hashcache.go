package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// A binary's sha256 is computed once per content: FileSHA256 remembers
// the hash of a file by its identity (device, inode, size, modification
// and change times; see identity), in the process and, once
// SetHashCacheDir names a folder, on disk for the next runs. Any change
// of the file (a write, a rename over it, a chmod, a touch) changes its
// change time, which no unprivileged process can set back, so the record
// misses and the file is hashed again.
//
// A record is written only for a hash this process computed from the
// open file whose identity was the same before and after the read. The
// residual risk is a write within the change time's granularity after
// the hash was read: a file whose change time is within freshFor of now
// is hashed and not recorded. A record on disk is believed as any file
// of the user's is: whoever can write the user's cache folder can write
// the agent's lock file too.

// freshFor: a file changed this recently is hashed every time.
var freshFor = 2 * time.Second

var hashes = struct {
	mu  sync.Mutex
	mem map[string]string
	dir string
}{mem: map[string]string{}}

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// SetHashCacheDir makes FileSHA256 keep its hashes in dir too ("" keeps
// them in the process only).
func SetHashCacheDir(dir string) {
	hashes.mu.Lock()
	defer hashes.mu.Unlock()
	hashes.dir = dir
}

// FileSHA256 is the hex sha256 of a file, computed once per content (see
// above).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return "", err
	}
	key, ok := identity(path, before, time.Now())
	if ok {
		if sum, hit := lookupHash(key); hit {
			return sum, nil
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if ok {
		if after, err := f.Stat(); err == nil {
			if again, ok := identity(path, after, time.Now()); ok && again == key {
				storeHash(key, sum)
			}
		}
	}
	return sum, nil
}

func lookupHash(key string) (string, bool) {
	hashes.mu.Lock()
	sum, ok := hashes.mem[key]
	dir := hashes.dir
	hashes.mu.Unlock()
	if ok || dir == "" {
		return sum, ok
	}
	data, err := os.ReadFile(filepath.Join(dir, recordName(key)))
	if err != nil || !hexHash.Match(data) {
		return "", false // none, or not a record this package wrote
	}
	sum = string(data)
	hashes.mu.Lock()
	hashes.mem[key] = sum
	hashes.mu.Unlock()
	return sum, true
}

func storeHash(key, sum string) {
	hashes.mu.Lock()
	hashes.mem[key] = sum
	dir := hashes.dir
	hashes.mu.Unlock()
	if dir == "" {
		return
	}
	_ = writeRecord(dir, recordName(key), []byte(sum)) // a cache: a failed write only costs a hash
}

// recordName is the file name of a record: the sha256 of its key.
func recordName(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

// writeRecord writes data to dir/name through a temporary file renamed
// into place, so a reader never sees half a record.
func writeRecord(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("hash cache: %w", err)
	}
	return nil
}
