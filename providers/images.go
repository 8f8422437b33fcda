package providers

// ImagePlaceholder replaces an image in the history of a model that takes
// no image input (a model alias whose capabilities lack image_in).
const ImagePlaceholder = "<system>An image was here; it is not shown because this model does not accept image input.</system>"

// WithoutImages returns history with every image part replaced by an
// ImagePlaceholder text part; messages without images are shared, not
// copied, and history itself is not changed.
func WithoutImages(history []Message) []Message {
	var out []Message
	for i, m := range history {
		if !hasImage(m.Content) {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = append(make([]Message, 0, len(history)), history[:i]...)
		}
		parts := make([]ContentPart, len(m.Content))
		for j, p := range m.Content {
			if p.Type == PartImage {
				p = TextPart(ImagePlaceholder)
			}
			parts[j] = p
		}
		m.Content = parts
		out = append(out, m)
	}
	if out == nil {
		return history
	}
	return out
}

func hasImage(parts []ContentPart) bool {
	for _, p := range parts {
		if p.Type == PartImage {
			return true
		}
	}
	return false
}

// JoinText joins the non-empty text parts of parts with a newline between
// them: the text of a tool result for an API that takes one string.
func JoinText(parts []ContentPart) string {
	var out []byte
	first := true
	for _, p := range parts {
		if p.Type != PartText || p.Text == "" {
			continue
		}
		if !first {
			out = append(out, '\n')
		}
		out = append(out, p.Text...)
		first = false
	}
	return string(out)
}
