package temporalengine

import (
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplayRecordedSession replays the recorded history of a real
// session (testdata/session-history.json: the end-to-end test's, whose
// workers A and B were SIGKILLed mid-call; KOSONG_RECORD_TEMPORAL_HISTORY
// records it anew): a change to the workflow that would break the
// sessions running when it is deployed fails here.
func TestReplayRecordedSession(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	RegisterReplay(r)
	if err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger{}, "testdata/session-history.json"); err != nil {
		t.Fatal(err)
	}
}
