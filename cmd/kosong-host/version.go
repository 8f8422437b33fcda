package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:         "version",
		Short:       "Print the version of kosong-host and of its plugin protocol",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "kosong-host %s (plugin protocol %d, sdk %s, %s %s/%s)\n",
				buildVersion(), pluginrpc.ProtocolVersion, pluginsdk.SDKVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
