# kosong-host: build, test, demo and benchmarks.
GO      ?= go
BIN     := bin
PLUGINS := $(patsubst plugins/%/cmd,%,$(wildcard plugins/*/cmd))
PROTO   := pluginsdk/proto/pluginv1
# make install puts kosong-host (host, built-in plugins and the built-in
# default agent in one binary) into $(DESTDIR)$(PREFIX)/bin.
PREFIX  ?= /usr/local
# Release builds: no file system paths in the binaries, no symbol tables.
GOBUILD := $(GO) build -trimpath -ldflags "-s -w"

.PHONY: all build install plugins test check-tracked check-imports cross demo bench fuzz proto python-stubs vet fmt clean

all: build

# kosong-host alone: the first-party plugins are built into it (each still
# runs in a process of its own).
build:
	@mkdir -p $(BIN)
	$(GOBUILD) -o $(BIN)/kosong-host ./cmd/kosong-host

install:
	@mkdir -p $(DESTDIR)$(PREFIX)/bin
	$(GOBUILD) -o $(DESTDIR)$(PREFIX)/bin/kosong-host ./cmd/kosong-host

# The first-party plugins as standalone binaries, for teams that ship them
# separately. Installed in bin/plugins, they override the built-ins.
plugins:
	@mkdir -p $(BIN)/plugins
	@for p in $(PLUGINS); do \
		echo "$(GOBUILD) -o $(BIN)/plugins/kosong-plugin-$$p ./plugins/$$p/cmd/kosong-plugin-$$p"; \
		$(GOBUILD) -o $(BIN)/plugins/kosong-plugin-$$p ./plugins/$$p/cmd/kosong-plugin-$$p || exit 1; \
	done

# make test runs these phases in order, each announced by a "==> " line:
# the repository checks, a build of every package (plain go build, so vet and
# the end-to-end tests reuse what it compiled), go vet for Linux, go vet for
# macOS and Windows of the packages whose code differs there, then every
# test under the race detector.
test:
	@$(MAKE) --no-print-directory check-tracked check-imports
	@echo "==> build (go build ./...)"
	$(GO) build ./...
	@echo "==> vet (linux)"
	$(GO) vet ./...
	@$(MAKE) --no-print-directory cross
	@echo "==> test (race)"
	$(GO) test -race -count=1 -timeout 45m ./...

# No binary and nothing over 1 MB is committed (testdata excepted); the
# second script tests the check on throwaway repositories.
check-tracked:
	@echo "==> check-tracked"
	.ci/check-tracked
	.ci/check-tracked-test

# Imports keep to the house's boundaries (only pluginrpc uses the generated
# protobuf code, the front ends link no gRPC, host/spec no provider SDK,
# plugins -> pluginsdk only); the second script tests the check on
# throwaway modules.
check-imports:
	@echo "==> check-imports"
	.ci/check-imports
	.ci/check-imports-test

# The host, plugins and their tests keep compiling (go vet type-checks them)
# where Linux-only parts (Pdeathsig, process groups) are left out by build
# tags. Only the packages whose files differ on the target, or which call
# syscall or golang.org/x/sys directly, are vetted there (.ci/cross-packages
# finds them, so a newly tagged file is picked up): every other package
# compiles from the same code as on Linux.
CROSS := darwin/arm64 windows/amd64
cross:
	@for t in $(CROSS); do \
		pkgs=$$(.ci/cross-packages $$t) || exit 1; \
		echo "==> vet ($$t: $$(echo $$pkgs | wc -w) packages with OS-specific code)"; \
		echo "GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet" $$pkgs; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $$pkgs || exit 1; \
	done

demo: build
	./$(BIN)/kosong-host run --agent agent.yaml --provider scripted \
		--script agents/demo/script.yaml --yolo -p "Show me around this repository."

# Go keeps only the first lines of a benchmark's log: host/bench also writes
# its figures in full to a report file, printed at the end.
BENCH_REPORT := $(BIN)/bench-report.txt
bench: build
	@rm -f $(BENCH_REPORT)
	KOSONG_BENCH_REPORT=$(abspath $(BENCH_REPORT)) $(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -count 1 ./host/bench/ ./host/loop/ ./host/mcpclient/
	@echo "host/bench figures in full ($(BENCH_REPORT)):"
	@cat $(BENCH_REPORT)
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./plugins/file/
	@echo "binary sizes after make build (du -k):"
	@printf '  %-18s %6d KB\n' "$(BIN)/kosong-host" "$$(du -k $(BIN)/kosong-host | cut -f1)" "$(BIN)/" "$$(du -sk $(BIN) | cut -f1)"
	@echo "plugins started when first needed against --eager-plugins (BenchmarkFirstRequestLazyVsEager, above):"
	@grep -A3 '^first model request after exec' $(BENCH_REPORT) || true
	@echo "a step on the Temporal engine against in-process (the CLI's dev server; skipped unless built, see .ci/run):"
	$(GO) test -run '^$$' -bench BenchmarkStep -benchtime 1x -count 1 ./host/temporalengine/

# Runs each fuzz target for FUZZTIME, one after the other (go test -fuzz takes
# one package and one target). A failing input is written to the package's
# testdata/fuzz/TARGET/, where plain `go test` runs it from then on.
FUZZTIME ?= 20s
FUZZ := host/spec:FuzzParseAgentSpec host/spec:FuzzLoadMCPConfig \
	pluginsdk/arguments:FuzzValidateArguments pluginsdk/arguments:FuzzCompileSchema \
	host/permission:FuzzParseCommand \
	host/session:FuzzLoadHistory providers/scripted:FuzzParseScript \
	providers/openaicompat:FuzzStream providers/anthropic:FuzzStream providers/google:FuzzStream

fuzz:
	@failed=""; for t in $(FUZZ); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "$(GO) test -run '^$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME) ./$$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./$$pkg || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi

# Regenerates the wire contract's Go code with the protoc plugins pinned in
# go.mod (tool directives) and Debian's protobuf-compiler.
proto:
	protoc -I $(PROTO) \
		--plugin=protoc-gen-go=$$($(GO) tool -n protoc-gen-go) \
		--plugin=protoc-gen-go-grpc=$$($(GO) tool -n protoc-gen-go-grpc) \
		--go_out=$(PROTO) --go_opt=paths=source_relative \
		--go-grpc_out=$(PROTO) --go-grpc_opt=paths=source_relative \
		$(PROTO)/plugin.proto

# The Python example plugin's stubs, into examples/python-plugin/gen (not
# committed: its test generates its own). Needs python3-grpcio and
# python3-grpc-tools.
python-stubs:
	examples/python-plugin/gen-stubs.sh

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go' | grep -v '\.pb\.go$$')

clean:
	rm -rf $(BIN)
