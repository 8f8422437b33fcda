package pins

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// identity is what says a file is unchanged: its path, device, inode,
// size, and modification and change times in nanoseconds. ok is false for
// a file changed within freshFor of now (see FileSHA256).
func identity(path string, fi os.FileInfo, now time.Time) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return "", false
	}
	ctime := time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	if now.Sub(ctime) < freshFor {
		return "", false
	}
	return fmt.Sprintf("v1\x00%s\x00%d\x00%d\x00%d\x00%d.%09d\x00%d.%09d", path, st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), true
}
