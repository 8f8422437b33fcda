package main

import (
	"context"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/server"
	"github.com/kosong-host/kosong-host/host/temporalengine"
)

var _ server.RemoteFeed = temporalSession{}

// Follow reads the feed of the session's turn (temporalengine's Follow)
// as the server logs it: each event's cursor and its host/loop events.
func (t temporalSession) Follow(ctx context.Context, turn int, from string, fn func(string, []loop.Event) error) error {
	var c temporalengine.Cursor
	if from != "" {
		var err error
		if c, err = temporalengine.ParseCursor(from); err != nil {
			return err
		}
	}
	return t.s.Follow(ctx, turn, c, func(c temporalengine.Cursor, e temporalengine.FeedEvent) error {
		return fn(c.String(), temporalengine.LoopEvents(e))
	})
}
