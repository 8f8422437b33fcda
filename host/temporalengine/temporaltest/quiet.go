package temporaltest

import (
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/log"
)

// quiet is a logger of the SDK that drops everything: the tests' output
// is theirs.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

var _ log.Logger = quiet{}

func describe(ns string) *workflowservice.DescribeNamespaceRequest {
	return &workflowservice.DescribeNamespaceRequest{Namespace: ns}
}
