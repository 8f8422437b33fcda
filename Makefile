# kosong-host: build, test, demo and benchmarks.
GO      ?= go
BIN     := bin
PLUGINS := $(notdir $(wildcard plugins/*))
PROTO   := pluginsdk/proto/pluginv1

.PHONY: all build test cross demo bench proto vet fmt clean

all: build

build:
	@mkdir -p $(BIN)/plugins
	$(GO) build -o $(BIN)/kosong-host ./cmd/kosong-host
	@for p in $(PLUGINS); do \
		echo "$(GO) build -o $(BIN)/plugins/kosong-plugin-$$p ./plugins/$$p"; \
		$(GO) build -o $(BIN)/plugins/kosong-plugin-$$p ./plugins/$$p || exit 1; \
	done

# End-to-end tests build the binaries they need themselves (into a temp dir);
# building here first surfaces compile errors once, before the race build.
test: build cross
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# The host, plugins and their tests keep compiling (go vet type-checks them)
# where Linux-only parts (Pdeathsig, process groups) are left out by build tags.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...

demo: build
	./$(BIN)/kosong-host run --agent agent.yaml --provider scripted \
		--script agents/demo/script.yaml --yolo -p "Show me around this repository."

bench: build
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -count 1 ./host/bench/ ./host/loop/ ./host/mcpclient/

# Runs each fuzz target for FUZZTIME, one after the other (go test -fuzz takes
# one package and one target). A failing input is written to the package's
# testdata/fuzz/TARGET/, where plain `go test` runs it from then on.
FUZZTIME ?= 20s
FUZZ := host/spec:FuzzParseAgentSpec host/spec:FuzzLoadMCPConfig \
	host/toolset:FuzzValidateArguments host/toolset:FuzzCompileSchema \
	host/session:FuzzLoadHistory providers/scripted:FuzzParseScript \
	providers/openaicompat:FuzzStream providers/anthropic:FuzzStream providers/google:FuzzStream

.PHONY: fuzz
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

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go' | grep -v '\.pb\.go$$')

clean:
	rm -rf $(BIN)
