#!/bin/sh
# Generates the Python stubs of the plugin wire (ours, go-plugin's and gRPC
# health) into DIR (default: gen/ beside this script) with grpcio-tools
# (Debian: python3-grpcio python3-grpc-tools). PYTHON picks the interpreter.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proto="$here/../../pluginsdk/proto"
out=${1:-"$here/gen"}
py=${PYTHON:-python3}
wkt=$("$py" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
mkdir -p "$out"
"$py" -m grpc_tools.protoc -I "$wkt" -I "$proto/pluginv1" -I "$proto/goplugin" -I "$proto/grpc/health/v1" \
	--python_out="$out" --grpc_python_out="$out" \
	"$proto/pluginv1/plugin.proto" \
	"$proto/goplugin/grpc_broker.proto" "$proto/goplugin/grpc_controller.proto" "$proto/goplugin/grpc_stdio.proto" \
	"$proto/grpc/health/v1/health.proto"
