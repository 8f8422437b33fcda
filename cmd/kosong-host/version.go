package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kosong-host and of its plugin protocol",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "kosong-host %s (plugin protocol %d, sdk %s, %s %s/%s)\n",
				buildVersion(), pluginsdk.ProtocolVersion, pluginsdk.SDKVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
