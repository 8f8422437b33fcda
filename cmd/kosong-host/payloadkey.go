package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/kosong-host/kosong-host/host/temporalengine"
)

// payloadKeyEnv names the payload key file when --payload-key is not given.
const payloadKeyEnv = "KOSONG_TEMPORAL_PAYLOAD_KEY_FILE"

func addPayloadKeyFlag(fl *pflag.FlagSet, e *engineFlags) {
	fl.StringVar(&e.payloadKey, "payload-key", "", "encrypt every Temporal payload (AES-256-GCM) with the 32-byte key of this file (raw, hex or base64); "+
		"the workers and every client of the sessions need the same key (default $"+payloadKeyEnv+"; see docs/scaling.md)")
}

// applyPayloadKey gives opts the data and failure converters of the
// payload key (--payload-key, else $KOSONG_TEMPORAL_PAYLOAD_KEY_FILE);
// without one they leave payloads in the clear and refuse encrypted ones
// with an error saying a key is needed. A bad key file is a usage error.
func (e *engineFlags) applyPayloadKey(opts *client.Options) error {
	file, flag := e.payloadKey, "--payload-key"
	if file == "" {
		file, flag = os.Getenv(payloadKeyEnv), "$"+payloadKeyEnv
	}
	var key *temporalengine.PayloadKey
	if file != "" {
		var err error
		if key, err = temporalengine.ReadPayloadKey(file); err != nil {
			return exitCode(2, fmt.Errorf("invalid %s: %w", flag, err))
		}
	}
	opts.DataConverter = temporalengine.NewDataConverter(key)
	e.dc = opts.DataConverter
	opts.FailureConverter = temporalengine.NewFailureConverter(key)
	return nil
}
