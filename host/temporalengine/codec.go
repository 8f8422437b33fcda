package temporalengine

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// Payload encryption: every payload a client or worker sends to Temporal
// (workflow inputs and results, activity inputs and results, update and
// query arguments and answers, and the messages of failures) is sealed
// with AES-256-GCM under a key the server never sees. The sealed payload
// carries its key's id (the first 8 bytes of the key's SHA-256, in hex),
// so that a payload sealed under another key fails with an error naming
// both ids rather than decoding to garbage.
const (
	// encodingEncrypted is the metadata encoding of a sealed payload.
	encodingEncrypted = "binary/encrypted"
	// metaKeyID is the metadata key of the sealing key's id.
	metaKeyID = "encryption-key-id"
	// metaCipher names the cipher.
	metaCipher = "encryption-cipher"
	cipherName = "AES-256-GCM"
)

// PayloadKey is a payload encryption key read from a file.
type PayloadKey struct {
	// File is the key file, named in errors.
	File string
	key  []byte
}

// ID is the key's id as sealed payloads carry it.
func (k *PayloadKey) ID() string { return keyID(k.key) }

func keyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}

// ReadPayloadKey reads a key file: exactly 32 bytes of key (not all
// printable ASCII), or the 32 bytes written as 64 hex digits or in
// standard base64 (surrounding white space ignored), as `head -c 32 /dev/urandom`, `openssl rand -hex
// 32` or `openssl rand -base64 32` write them. The error names the file.
func ReadPayloadKey(file string) (*PayloadKey, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("payload key file %s: %w", file, unwrapPath(err))
	}
	key, err := parseKey(b)
	if err != nil {
		return nil, fmt.Errorf("payload key file %s: %w", file, err)
	}
	return &PayloadKey{File: file, key: key}, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func parseKey(b []byte) ([]byte, error) {
	// 32 bytes of text (the hex of a 16-byte key, say) are no raw key: a
	// random key is all printable with a chance of 1e-14.
	if len(b) == 32 && slices.ContainsFunc(b, func(c byte) bool { return c < '!' || c > '~' }) {
		return b, nil
	}
	t := bytes.TrimSpace(b)
	if k, err := hex.DecodeString(string(t)); err == nil && len(k) == 32 {
		return k, nil
	}
	if k, err := base64.StdEncoding.DecodeString(string(t)); err == nil && len(k) == 32 {
		return k, nil
	}
	return nil, fmt.Errorf("%d bytes: want a 32-byte key, as 32 raw bytes, 64 hex digits or base64", len(b))
}

// NewDataConverter is the data converter of a client (and its workers)
// that seals every payload with key; with a nil key it leaves payloads in
// the clear but refuses sealed ones with an error saying a key is needed.
func NewDataConverter(key *PayloadKey) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), newCodec(key))
}

// NewFailureConverter seals the messages and stack traces of failures
// too (with a nil key: the default converter).
func NewFailureConverter(key *PayloadKey) converter.FailureConverter {
	if key == nil {
		return temporal.GetDefaultFailureConverter()
	}
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: NewDataConverter(key), EncodeCommonAttributes: true})
}

type codec struct {
	key  *PayloadKey
	aead cipher.AEAD
}

func newCodec(key *PayloadKey) *codec {
	c := &codec{key: key}
	if key != nil {
		block, err := aes.NewCipher(key.key)
		if err != nil { // a 32-byte key never fails
			panic(err)
		}
		c.aead, err = cipher.NewGCM(block)
		if err != nil {
			panic(err)
		}
	}
	return c
}

// Encode seals each payload: the payload's protobuf encoding (its
// metadata with it), nonce first.
func (c *codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if c.aead == nil {
		return payloads, nil
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plain)+c.aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(encodingEncrypted),
				metaKeyID:                  []byte(c.key.ID()),
				metaCipher:                 []byte(cipherName),
			},
			Data: c.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// Decode opens the sealed payloads and passes the others through.
func (c *codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != encodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[metaKeyID])
		switch {
		case c.aead == nil:
			return nil, fmt.Errorf("the session's payloads are encrypted (key id %s): give the key file with --payload-key", id)
		case id != c.key.ID():
			return nil, fmt.Errorf("a payload is encrypted with key id %s, not with the key of %s (key id %s)", id, c.key.File, c.key.ID())
		}
		n := c.aead.NonceSize()
		if len(p.Data) < n {
			return nil, fmt.Errorf("a payload encrypted with key id %s is cut short", id)
		}
		plain, err := c.aead.Open(nil, p.Data[:n], p.Data[n:], nil)
		if err != nil {
			return nil, fmt.Errorf("a payload encrypted with key id %s fails to decrypt with %s: %w", id, c.key.File, err)
		}
		var dp commonpb.Payload
		if err := proto.Unmarshal(plain, &dp); err != nil {
			return nil, fmt.Errorf("a payload encrypted with key id %s: %w", id, err)
		}
		out[i] = &dp
	}
	return out, nil
}
