package temporalengine

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers the workflow and a's activities on w.
func Register(w worker.Registry, a *Activities) {
	w.RegisterWorkflowWithOptions(Workflow, workflowOptions())
	w.RegisterActivityWithOptions(a.ModelRequest, activity.RegisterOptions{Name: ActivityModel})
	w.RegisterActivityWithOptions(a.ToolCall, activity.RegisterOptions{Name: ActivityTool})
	w.RegisterActivityWithOptions(a.CloseSession, activity.RegisterOptions{Name: ActivityClose})
	w.RegisterActivityWithOptions(a.DropClaims, activity.RegisterOptions{Name: ActivityDropClaims})
	w.RegisterWorkflowWithOptions(FeedWorkflow, workflow.RegisterOptions{Name: WorkflowFeed})
	w.RegisterActivityWithOptions(a.EndFeed, activity.RegisterOptions{Name: ActivityFeedEnd})
}

// NewWorker is a worker of the task queue that runs session workflows and
// hosts sessions' conversations (worker sessions enabled); Run it, and
// Close a once it returns.
func NewWorker(c client.Client, taskQueue string, a *Activities) worker.Worker {
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	w := worker.New(c, taskQueue, worker.Options{EnableSessionWorker: true})
	a.pub = newPublisher(c, taskQueue) // the turns' feeds (feed.go)
	Register(w, a)
	return w
}

func workflowOptions() workflow.RegisterOptions { return workflow.RegisterOptions{Name: WorkflowName} }

// RegisterReplay registers the workflow on a replayer (determinism tests
// over recorded histories).
func RegisterReplay(r worker.WorkflowReplayer) {
	r.RegisterWorkflowWithOptions(Workflow, workflowOptions())
}
