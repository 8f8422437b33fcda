//go:build !unix

package file

import (
	"io"
	"os"
)

// readWhole reads the regular file at path into buf (grown as needed) when
// it is at most limit bytes long; whole is false for a larger file, which
// is left unread.
func readWhole(path string, buf []byte, limit int) (data []byte, whole bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0], false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return buf[:0], false, err
	}
	if fi.Size() > int64(limit) {
		return buf[:0], false, nil
	}
	want := int(fi.Size()) + 1
	if cap(buf) < want {
		buf = make([]byte, 0, want+want/8)
	}
	data = buf[:0]
	for {
		if len(data) == cap(data) {
			if len(data) > limit {
				return data, false, nil
			}
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, true, nil
		}
		if err != nil {
			return data, false, err
		}
	}
}
