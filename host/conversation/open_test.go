package conversation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/providers/registry"
)

const bareAgent = "version: 1\nagent:\n  name: bare\n  system_prompt_path: ./s.md\n  tools: []\n"

// setup writes files into a fresh work dir and returns the Config of a
// conversation there with the scripted provider.
func setup(t *testing.T, files map[string]string) Config {
	t.Helper()
	dir := t.TempDir()
	base := map[string]string{"agent.yaml": bareAgent, "s.md": "You help.", "script.yaml": "turns:\n  - text: Hello.\n"}
	for name, body := range files {
		base[name] = body
	}
	for name, body := range base {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config-home")) // no default configuration file
	cfg := Config{
		AgentPath:   filepath.Join(dir, "agent.yaml"),
		Provider:    registry.Options{Provider: registry.Scripted, Script: "script.yaml"},
		WorkDir:     dir,
		SessionRoot: filepath.Join(dir, "sessions"),
	}
	if _, ok := files["config.yaml"]; ok {
		cfg.ConfigPath = filepath.Join(dir, "config.yaml")
	}
	return cfg
}

func TestProviderOptions(t *testing.T) {
	s := &spec.Spec{Model: "sonnet"}
	tests := []struct {
		opts     registry.Options
		provider string
		model    string
		alias    string
	}{
		{registry.Options{Provider: "openai"}, "openai", "", ""},
		{registry.Options{}, "", "", "sonnet"}, // the agent's model names an alias
		{registry.Options{Model: "fast"}, "", "fast", ""},
		{registry.Options{Script: "s.yaml"}, "", "", ""}, // a script picks the scripted provider
		{registry.Options{Provider: "scripted", Script: "s.yaml"}, "scripted", "", ""},
	}
	for _, tt := range tests {
		got := providerOptions(Config{Provider: tt.opts, ConfigPath: "c.yaml", WorkDir: "/w"}, s)
		if got.Provider != tt.provider || got.Model != tt.model || got.ModelAlias != tt.alias || got.ConfigPath != "c.yaml" || got.WorkDir != "/w" {
			t.Errorf("%+v: got %+v", tt.opts, got)
		}
	}
	if got := providerOptions(Config{}, &spec.Spec{}); got.Provider != "" || got.ModelAlias != "" {
		t.Errorf("no flag, no model: %+v", got)
	}
}

// badConfigs are mistakes Open and Check both refuse, with the text both
// give.
var badConfigs = []struct {
	name  string
	files map[string]string
	edit  func(*Config)
	want  string
}{
	{"bad spec", map[string]string{"agent.yaml": "version: 1\nagent:\n  name: bare\n  system_prompt_path: ./s.md\n  toools: []\n"}, nil, "toools"},
	{"missing spec", nil, func(c *Config) { c.AgentPath = filepath.Join(c.WorkDir, "nope.yaml") }, "nope.yaml"},
	{"bad provider", nil, func(c *Config) { c.Provider = registry.Options{Provider: "nope"} }, `"nope"`},
	{"bad script", map[string]string{"script.yaml": "turns: [\n"}, nil, "script.yaml"},
	{"bad hooks", map[string]string{"config.yaml": "hooks:\n  - {event: PreTool, command: x}\n"}, nil, `unknown event "PreTool"`},
	{"bad permission", map[string]string{"config.yaml": "permissions:\n  deny: [\"Nope(x)\"]\n"}, nil, "unknown tool Nope"},
	{"bad prompt", map[string]string{"s.md": "You help ${WHO}."}, nil, "WHO"},
}

func TestOpenRefusesBadConfig(t *testing.T) {
	for _, tt := range badConfigs {
		t.Run(tt.name, func(t *testing.T) {
			cfg := setup(t, tt.files)
			if tt.edit != nil {
				tt.edit(&cfg)
			}
			conv, err := Open(context.Background(), cfg)
			if err == nil {
				conv.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line with %q", err, tt.want)
			}
		})
	}
}

// TestCheckFindsWhatOpenRefuses: validate (Check) reports the very error
// run (Open) fails with.
func TestCheckFindsWhatOpenRefuses(t *testing.T) {
	for _, tt := range badConfigs {
		t.Run(tt.name, func(t *testing.T) {
			cfg := setup(t, tt.files)
			if tt.edit != nil {
				tt.edit(&cfg)
			}
			_, openErr := Open(context.Background(), cfg)
			checked, err := Check(context.Background(), cfg)
			if err == nil {
				defer checked.Close()
				if len(checked.Problems) == 0 {
					t.Fatalf("Check found nothing; Open failed with %v", openErr)
				}
				err = checked.Problems[0]
			}
			if openErr == nil || err.Error() != openErr.Error() {
				t.Fatalf("Check: %v\nOpen:  %v", err, openErr)
			}
		})
	}
}

func TestCheckGoodAgent(t *testing.T) {
	cfg := setup(t, nil)
	checked, err := Check(context.Background(), cfg)
	if err != nil || len(checked.Problems) > 0 || checked.Agent == nil {
		t.Fatalf("%+v %v", checked, err)
	}
	checked.Close()
	if _, err := os.Stat(cfg.SessionRoot); !os.IsNotExist(err) {
		t.Fatalf("Check started a session: %v", err)
	}
	// A missing key is a warning.
	cfg.Provider = registry.Options{Provider: "openai", Getenv: func(string) string { return "" }}
	checked, err = Check(context.Background(), cfg)
	if err != nil || len(checked.Problems) > 0 || len(checked.Warnings) != 1 || !strings.Contains(checked.Warnings[0], "OPENAI_API_KEY") {
		t.Fatalf("%+v %v", checked, err)
	}
	checked.Close()
}

func TestOpenTurnClearAndResume(t *testing.T) {
	cfg := setup(t, map[string]string{"script.yaml": "turns:\n  - text: Hello.\n  - text: Again.\n"})
	var events []loop.Event
	cfg.Observer = loop.ObserverFunc(func(e loop.Event) { events = append(events, e) })
	conv, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := conv.ID()
	if _, err := conv.Turn(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if meta, err := session.ReadMeta(conv.Session().Dir); err != nil || meta.WorkDir != cfg.WorkDir || meta.Agent != "bare" {
		t.Fatalf("meta %+v %v", meta, err)
	}
	if err := conv.Clear(context.Background()); err != nil || conv.ID() == first || len(conv.History()) != 0 {
		t.Fatalf("clear: %v, id %s, history %d", err, conv.ID(), len(conv.History()))
	}
	if err := conv.SetModel(context.Background(), "no-such-alias"); err == nil {
		t.Fatal("SetModel took a model the scripted provider does not have")
	} else if conv.Provider().Name() != registry.Scripted {
		t.Fatalf("a failed SetModel changed the provider to %s", conv.Provider().Name())
	}
	cleared := conv.ID()
	conv.Close()
	if len(events) == 0 {
		t.Fatal("the observer got no events")
	}

	for _, tt := range []struct {
		resume, id string
		n          int
	}{{first, first, 2}, {session.Last, cleared, 0}} {
		cfg.Resume = tt.resume
		conv, err = Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if conv.ID() != tt.id || len(conv.History()) != tt.n {
			t.Errorf("resume %s: %s with %d messages, want %s with %d", tt.resume, conv.ID(), len(conv.History()), tt.id, tt.n)
		}
		conv.Close()
	}

	cfg.Resume = "no-such-session"
	if _, err := Open(context.Background(), cfg); err == nil {
		t.Fatal("Open resumed a session that does not exist")
	}
}

func TestOpenApprovalModes(t *testing.T) {
	for _, tt := range []struct {
		mode approval.Mode
		yolo bool
		want approval.Mode
	}{
		{approval.ModeAsk, false, approval.ModeAsk},
		{approval.ModeAsk, true, approval.ModeYolo},
		{approval.ModeUnattended, true, approval.ModeUnattended}, // yolo switches only a flow that asks
		{approval.ModeYolo, false, approval.ModeYolo},
	} {
		cfg := setup(t, nil)
		cfg.Approval, cfg.Yolo = tt.mode, tt.yolo
		conv, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := conv.Approvals().Mode(); got != tt.want {
			t.Errorf("mode %v yolo %v: %v, want %v", tt.mode, tt.yolo, got, tt.want)
		}
		conv.Close()
	}
}

func TestNewCannotChange(t *testing.T) {
	c := New(Parts{})
	if err := c.Clear(context.Background()); !errors.Is(err, ErrCannotChange) {
		t.Fatalf("Clear: %v", err)
	}
	if err := c.SetModel(context.Background(), "x"); !errors.Is(err, ErrCannotChange) {
		t.Fatalf("SetModel: %v", err)
	}
}

// TestSetModelRefusesUnknownNames: /model takes an alias, the model of an
// alias or PROVIDER/MODEL; a near miss gets a "did you mean", and a refused
// name leaves the model as it was.
func TestSetModelRefusesUnknownNames(t *testing.T) {
	cfg := setup(t, map[string]string{"script.yaml": "turns:\n  - text: Hello.\n",
		"config.yaml": "providers:\n  local: {type: openai-compatible, base_url: \"http://127.0.0.1:1/v1\"}\n" +
			"models:\n  big: {provider: local, model: big-model, max_context_size: 200000}\n"})
	conv, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	for name, want := range map[string]string{
		"bgi":  `model "bgi" is not a model alias (aliases in ` + cfg.ConfigPath + `: big) nor a known model: name a provider's model as PROVIDER/MODEL (providers: local, kimi, openai, anthropic, google, scripted) (did you mean big?)`,
		"nope": `model "nope" is not a model alias`,
	} {
		err := conv.SetModel(context.Background(), name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SetModel(%s) = %v, want %q", name, err, want)
		}
		if conv.Provider().Name() != registry.Scripted {
			t.Fatalf("a refused SetModel changed the provider to %s", conv.Provider().Name())
		}
	}
	for name, want := range map[string]int64{"big": 200000, "local/other": 0, "big-model": 200000} {
		if err := conv.SetModel(context.Background(), name); err != nil {
			t.Fatalf("SetModel(%s): %v", name, err)
		}
		if conv.Provider().Name() != "local" || conv.MaxContextSize() != want {
			t.Errorf("SetModel(%s): %s/%s window %d, want local, window %d", name, conv.Provider().Name(), conv.Provider().Model(), conv.MaxContextSize(), want)
		}
	}
}
