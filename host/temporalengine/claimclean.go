package temporalengine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Claim cleanup. A session's claim checks are stored in its own folder of
// the claim directory (named for its workflow id), so that removing them
// never touches another session's, even one whose tool returned the same
// output. The folder is removed when the session closes (the workflow
// runs ActivityDropClaims); sessions that never close (cancelled,
// terminated, their workflow lost) leave theirs to the worker's sweep of
// claim files unused for longer than a TTL (SweepClaims): a file is
// touched each time a model request reads it.

// DefaultClaimTTL is how long a worker keeps a claim file no model
// request read (SweepClaims).
const DefaultClaimTTL = 30 * 24 * time.Hour

// ActivityDropClaims removes the session's claim checks.
const ActivityDropClaims = "kosong.DropClaims"

// claimCleanupVersion marks the runs that drop their claims when they
// close (workflow.GetVersion): a run recorded before it replays without.
const claimCleanupVersion = "claim-cleanup"

var safeName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// claimSession is the claim folder's name of the activity's session: its
// workflow id, or its hash when the id is no safe file name.
func claimSession(ctx context.Context) string {
	return claimFolderName(activity.GetInfo(ctx).WorkflowExecution.ID)
}

func claimFolderName(workflowID string) string {
	if safeName.MatchString(workflowID) && strings.Trim(workflowID, ".") != "" {
		return workflowID
	}
	sum := sha256.Sum256([]byte(workflowID))
	return "id-" + hex.EncodeToString(sum[:16])
}

// folder is session's folder of claims.
func (c claims) folder(session string) string { return filepath.Join(c.dir, session) }

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// DropClaims removes the claim checks of the activity's session.
func (a *Activities) DropClaims(ctx context.Context) error {
	if a.claims.dir == "" {
		return nil
	}
	if err := os.RemoveAll(a.claims.folder(claimSession(ctx))); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrorClaimCheck, nil)
	}
	return nil
}

// dropClaims runs ActivityDropClaims as the session closes: on its
// worker session when one is open (whose claim directory holds them),
// else on any worker of the task queue (a shared directory). A failure
// leaves them to the sweep.
func (s *session) dropClaims(ctx workflow.Context) {
	if workflow.GetVersion(ctx, claimCleanupVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	actx := ctx
	if s.sctx != nil && !s.lost && workflow.GetSessionInfo(s.sctx).SessionState == workflow.SessionStateOpen {
		actx = s.sctx
	}
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2}})
	_ = workflow.ExecuteActivity(actx, ActivityDropClaims).Get(ctx, nil)
}

// SweepClaims removes, every so often until ctx ends (first at once),
// the claim files not used for longer than ttl, and the folders left
// empty: the claims of sessions that never closed. Errors are reported
// to report (nil: dropped).
func (a *Activities) SweepClaims(ctx context.Context, ttl time.Duration, report func(error)) {
	if a.claims.dir == "" || ttl <= 0 {
		return
	}
	every := min(max(ttl/4, time.Minute), time.Hour)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := sweepClaims(a.claims.dir, ttl, time.Now()); err != nil && report != nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepClaims removes the files of dir and its session folders last
// modified before now-ttl, then the session folders left empty, and
// returns how many files it removed.
func sweepClaims(dir string, ttl time.Duration, now time.Time) (int, error) {
	cutoff := now.Add(-ttl)
	removed := 0
	var errs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			errs = append(errs, err)
			return nil
		}
		if d.IsDir() {
			if path != dir && filepath.Dir(path) != dir {
				return filepath.SkipDir // not a session folder
			}
			return nil
		}
		if !strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, ".tmp") {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			return nil
		}
		removed++
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			// Fails (and is kept) unless empty.
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return removed, errors.Join(errs...)
}
