package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"
)

// ModePlan is the session mode of plan mode: the model explores with
// read-only tools and presents its plan for approval before changing
// anything (host/conversation). Setting ask or yolo leaves it; approvals
// are asked in plan mode (the plan's own approval too).
const ModePlan = "plan"

// withPlanMode adds the plan mode to the session's modes, current while
// plan mode is on.
func withPlanMode(s *session, st *acpsdk.SessionModeState) *acpsdk.SessionModeState {
	st.AvailableModes = append(st.AvailableModes, acpsdk.SessionMode{Id: ModePlan, Name: "Plan",
		Description: acpsdk.Ptr("Explore with read-only tools and present a plan for approval before changing anything")})
	if s.conv.PlanMode() {
		st.CurrentModeId = ModePlan
	}
	return st
}

// currentMode is the session's mode: plan while plan mode is on, else the
// approval policy.
func currentMode(s *session) acpsdk.SessionModeId {
	if s.remote != nil {
		if s.remote.PlanMode() {
			return ModePlan
		}
		return acpsdk.SessionModeId(s.remote.Info().Mode)
	}
	switch {
	case s.conv.PlanMode():
		return ModePlan
	case s.conv.Approvals().Yolo():
		return ModeYolo
	}
	return ModeAsk
}

// setPlanMode handles session/set_mode for plan mode: the mode plan turns
// it on (approvals asked), and is done; ask and yolo turn it off and the
// caller sets the approval policy.
func (a *Agent) setPlanMode(ctx context.Context, s *session, id acpsdk.SessionModeId) (done bool) {
	if id == ModeAsk || id == ModeYolo {
		s.conv.SetPlanMode(false)
	}
	if id != ModePlan {
		return false
	}
	s.conv.Approvals().SetYolo(false)
	if !s.conv.SetPlanMode(true) {
		s.out.send(ctx, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: ModePlan}})
	}
	return true
}

// planModeChanged tells the client of the session's mode once plan mode
// is turned on or off (by the user, or by the model's EnterPlanMode and an
// approved ExitPlanMode).
func (u *updates) planModeChanged(ctx context.Context) {
	u.send(ctx, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: currentMode(u.session)}})
}
