package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// ReadFile's caps. A numbered line never exceeds maxLineChars characters and
// the whole output stays within the SDK's output cap, so the SDK never has
// to cut what ReadFile returns.
const (
	maxReadLines  = 1000
	maxLineChars  = pluginsdk.MaxOutputLineChars
	maxReadBytes  = 100 << 10
	maxReadChars  = pluginsdk.MaxOutputChars
	truncatedMark = pluginsdk.TruncatedMarker
)

// ReadParams are ReadFile's arguments.
type ReadParams struct {
	Path       string `json:"path" minLength:"1" jsonschema:"The file to read: absolute, or relative to the working directory."`
	LineOffset int    `json:"line_offset,omitempty" default:"1" jsonschema:"The line to start at, counting from 1 (the default). A negative number counts from the end: -1 is the last line, -20 the twentieth line from the end. 0 is invalid."`
	NLines     int    `json:"n_lines,omitempty" default:"1000" minimum:"1" maximum:"1000" jsonschema:"How many lines to read, at most 1000 (the default)."`
}

// ReadFile reads a text file with line numbers.
type ReadFile struct {
	ws workspace
	// editor, when the host lends the editor's files, gives the text read
	// (unsaved changes included); nil: the disk.
	editor pluginsdk.Editor
}

// NewReadFile constructs ReadFile from the host's Environment and Editor
// (nil when the host lends no editor).
func NewReadFile(env pluginsdk.Environment, ed pluginsdk.Editor) (*ReadFile, error) {
	ws, err := newWorkspace(env)
	return &ReadFile{ws: ws, editor: ed}, err
}

// Call reads the requested lines.
func (t *ReadFile) Call(ctx context.Context, p ReadParams) pluginsdk.Result {
	if p.Path == "" {
		return pluginsdk.Error("path is empty.").WithBrief("Invalid path")
	}
	if p.LineOffset == 0 {
		return pluginsdk.Error("line_offset must not be 0: lines are numbered from 1, and negative values count from the end.").
			WithBrief("Invalid line_offset")
	}
	nLines := p.NLines
	if nLines == 0 {
		nLines = maxReadLines
	}
	if nLines < 1 {
		return pluginsdk.Error("n_lines must be at least 1.").WithBrief("Invalid n_lines")
	}
	nLines = min(nLines, maxReadLines)
	path := t.ws.abs(p.Path)
	fi, err := os.Stat(path)
	if err != nil {
		return pluginsdk.Error(describeStatError(p.Path, err)).WithBrief("Cannot read file")
	}
	if fi.IsDir() {
		return pluginsdk.Error(fmt.Sprintf("`%s` is a directory, not a file. Use Glob to list its contents.", p.Path)).
			WithBrief("Is a directory")
	}
	if !fi.Mode().IsRegular() {
		return pluginsdk.Error(fmt.Sprintf("`%s` is not a regular file.", p.Path)).WithBrief("Not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return pluginsdk.Error(describeStatError(p.Path, err)).WithBrief("Cannot read file")
	}
	defer f.Close()
	if t.editor != nil {
		ef, _, err := editorCopy(ctx, t.editor, path)
		if err != nil {
			return pluginsdk.Error(fmt.Sprintf("Cannot read `%s` in the editor: %v", p.Path, err)).WithBrief("Cannot read file")
		}
		defer ef.Close()
		f = ef
	}
	binary, err := sniff(f)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot read `%s`: %v", p.Path, err)).WithBrief("Cannot read file")
	}
	if binary {
		return pluginsdk.Error(fmt.Sprintf("`%s` looks like a binary file (it has NUL bytes or is not UTF-8 text); ReadFile only reads text files. "+
			"Use a suitable command through the Shell tool to inspect it (e.g. `file`, `xxd | head`).", p.Path)).WithBrief("Binary file")
	}
	total, err := countLines(ctx, f)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot read `%s`: %v", p.Path, err)).WithBrief("Cannot read file")
	}
	if total == 0 {
		return pluginsdk.Ok("").WithMessage("The file is empty.").WithBrief("Empty file")
	}
	start := p.LineOffset
	if start < 0 {
		start = max(total+start+1, 1)
	}
	if start > total {
		return pluginsdk.Ok("").WithMessage(fmt.Sprintf("The file has %d lines; line_offset %d is past its end.", total, p.LineOffset)).
			WithBrief("No lines read")
	}
	return readLines(ctx, f, p.Path, start, nLines, total)
}

// readLines renders up to n lines from line start, within the caps.
func readLines(ctx context.Context, f *os.File, shown string, start, n, total int) pluginsdk.Result {
	br := bufio.NewReaderSize(f, 64<<10)
	var out strings.Builder
	var cutLines []int
	lineNo, bytesOut, charsOut := 0, 0, 0
	stop := "" // why reading stopped before the end of the file
	for lineNo < total {
		if err := ctx.Err(); err != nil {
			return pluginsdk.Error("Reading was cancelled.")
		}
		keep := 0
		if lineNo+1 >= start {
			keep = maxLineChars * utf8.UTFMax
		}
		raw, longer, err := readLine(br, keep)
		if err != nil && !errors.Is(err, io.EOF) {
			return pluginsdk.Error(fmt.Sprintf("Cannot read `%s`: %v", shown, err)).WithBrief("Cannot read file")
		}
		lineNo++
		if lineNo < start {
			continue
		}
		prefix := fmt.Sprintf("%6d\t", lineNo)
		text := strings.ToValidUTF8(string(bytes.TrimSuffix(raw, []byte("\r"))), "\uFFFD")
		room := maxLineChars - utf8.RuneCountInString(prefix)
		if longer || utf8.RuneCountInString(text) > room {
			text = cutRunes(text, room-utf8.RuneCountInString(truncatedMark)) + truncatedMark
			cutLines = append(cutLines, lineNo)
		}
		line := prefix + text + "\n"
		if bytesOut+len(line) > maxReadBytes {
			stop = fmt.Sprintf("Stopped at the limit of %d KB per call.", maxReadBytes>>10)
			lineNo--
			break
		}
		if c := utf8.RuneCountInString(line); charsOut+c > maxReadChars {
			stop = fmt.Sprintf("Stopped at the limit of %d characters per call.", maxReadChars)
			lineNo--
			break
		} else {
			charsOut += c
		}
		bytesOut += len(line)
		out.WriteString(line)
		if lineNo-start+1 == n {
			if n == maxReadLines && lineNo < total {
				stop = fmt.Sprintf("Stopped at the limit of %d lines per call.", maxReadLines)
			}
			break
		}
	}
	read := lineNo - start + 1
	var msg strings.Builder
	if read == 0 {
		fmt.Fprintf(&msg, "No line read: line %d alone is over the limits.", start)
	} else {
		fmt.Fprintf(&msg, "Read lines %d-%d of %d.", start, lineNo, total)
	}
	if lineNo >= total {
		msg.WriteString(" End of file reached.")
	} else {
		if stop != "" {
			msg.WriteString(" " + stop)
		}
		fmt.Fprintf(&msg, " More lines follow: continue with line_offset=%d.", lineNo+1)
	}
	if len(cutLines) > 0 {
		fmt.Fprintf(&msg, " %s longer than %d characters (with the line number) and cut, marked %s.",
			describeLines(cutLines), maxLineChars, truncatedMark)
	}
	return pluginsdk.Ok(out.String()).WithMessage(msg.String()).WithBrief(fmt.Sprintf("Read %d lines", read))
}

func describeLines(lines []int) string {
	if len(lines) == 1 {
		return fmt.Sprintf("Line %d was", lines[0])
	}
	shown := make([]string, 0, 10)
	for _, l := range lines[:min(len(lines), 10)] {
		shown = append(shown, strconv.Itoa(l))
	}
	s := "Lines " + strings.Join(shown, ", ")
	if len(lines) > 10 {
		s += fmt.Sprintf(" and %d more", len(lines)-10)
	}
	return s + " were"
}

// readLine reads one line without its "\n", keeping at most keep bytes of it
// (plus up to one incomplete rune, so no character is split); longer says
// bytes were dropped. It returns io.EOF with the last line when that line has
// no final newline.
func readLine(br *bufio.Reader, keep int) (line []byte, longer bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if room := keep - len(line); room > 0 {
			take := min(room, len(chunk))
			// Extend to the end of a rune cut by the boundary.
			for take < len(chunk) && !utf8.RuneStart(chunk[take]) {
				take++
			}
			line = append(line, chunk[:take]...)
			longer = longer || take < len(chunk)
		} else if len(chunk) > 0 {
			longer = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, longer, err
	}
}

// countLines counts f's lines (a last line without "\n" counts) and rewinds f.
func countLines(ctx context.Context, f *os.File) (int, error) {
	buf := make([]byte, 256<<10)
	n, last := 0, byte('\n')
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := f.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte("\n"))
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	_, err := f.Seek(0, io.SeekStart)
	return n, err
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for range max(n, 0) {
		if i >= len(s) {
			return s
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
