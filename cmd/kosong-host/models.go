package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/providers/registry"
)

// newModelsCmd lists the configured providers and model aliases and the
// built-in providers, with whether their API keys are set.
func newModelsCmd(g *globals) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List model aliases and providers, and which API keys are missing",
		Long: `List the model aliases and providers of the configuration file
($XDG_CONFIG_HOME/kosong-host/config.yaml, else ~/.config/kosong-host/config.yaml,
or --config FILE), and the built-in providers with their environment
variables, saying which API keys are set and which are missing. Variables
are read from the environment, then from .env in the current directory
(in a trusted folder: see kosong-host trust).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			wd, err := os.Getwd()
			if err != nil {
				return exitCode(2, err)
			}
			ov, err := registry.Describe(registry.Options{ConfigPath: configPath, WorkDir: wd, IgnoreDotEnv: !g.dotenvTrusted})
			if err != nil {
				var ce *registry.ConfigError
				if errors.As(err, &ce) {
					return exitCode(2, err)
				}
				return err
			}
			return printOverview(cmd.OutOrStdout(), ov)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "configuration file of providers and model aliases (default $XDG_CONFIG_HOME/kosong-host/config.yaml)")
	return cmd
}

func printOverview(out io.Writer, ov *registry.Overview) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	switch {
	case ov.ConfigPath == "":
		fmt.Fprintln(w, "Configuration: none (neither XDG_CONFIG_HOME nor HOME is set; use --config FILE)")
	case !ov.ConfigFound:
		fmt.Fprintf(w, "Configuration: %s (not found)\n", ov.ConfigPath)
	default:
		fmt.Fprintf(w, "Configuration: %s\n", ov.ConfigPath)
	}

	fmt.Fprintln(w, "\nModel aliases:")
	if len(ov.Models) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		fmt.Fprintln(w, "  ALIAS\tPROVIDER\tMODEL\tCONTEXT\tCAPABILITIES\tKEY")
		for _, st := range ov.Models {
			m := st.Entry
			alias := m.Alias
			if st.Default {
				alias += " (default)"
			}
			context := "-"
			if m.MaxContextSize > 0 {
				context = strconv.Itoa(m.MaxContextSize)
			}
			caps := strings.Join(m.Capabilities, ",")
			if caps == "" {
				caps = "-"
			}
			key := "ok"
			if st.Missing != "" {
				key = "missing: " + st.Missing
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\n", alias, m.Provider, m.Model, context, caps, key)
		}
	}

	fmt.Fprintln(w, "\nConfigured providers:")
	if len(ov.Providers) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		fmt.Fprintln(w, "  NAME\tTYPE\tBASE URL\tKEY")
		for _, p := range ov.Providers {
			base := p.BaseURL
			if base == "" {
				base = "(default)"
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", p.Name, p.Type, base, keyText(p))
		}
	}

	fmt.Fprintln(w, "\nBuilt-in providers:")
	fmt.Fprintln(w, "  NAME\tDEFAULT MODEL\tKEY\tBASE URL, MODEL VARIABLES")
	for _, b := range ov.Builtins {
		key := b.KeyVars() + " missing"
		if b.KeySet != "" {
			key = b.KeySet + " set"
		}
		name := b.Name
		if b.Configured {
			name += " (replaced by the configured one)"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s, %s\n", name, b.Model, key, b.BaseURLEnv, b.ModelEnv)
	}
	fmt.Fprintf(w, "  %s\t-\tno key\t--script FILE\n", registry.Scripted)
	return w.Flush()
}

func keyText(p registry.ProviderStatus) string {
	switch {
	case p.Missing != "":
		return "missing: " + p.Missing
	case p.KeyFrom == "":
		return "none (not required)"
	case strings.HasPrefix(p.KeyFrom, "api_key "):
		return "set (api_key in the file)"
	default:
		return "set (" + p.KeyFrom + ")"
	}
}
