package loop

// PlanModeChanged: plan mode was turned on or off (by the user, or by the
// model's EnterPlanMode and approved ExitPlanMode).
type PlanModeChanged struct {
	On bool `json:"plan_mode"`
}

func (PlanModeChanged) event() {}
