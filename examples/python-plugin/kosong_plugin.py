"""kosong_plugin: serve kosong-host tools from Python.

This module does for a Python plugin what the Go SDK (pluginsdk) does for a
Go one, following docs/plugin-protocol.md step by step: the handshake, the
one-time TLS material on the inherited file descriptor, go-plugin's own
services (health, controller, stdio, broker), the Plugin service, the host
capabilities over the broker, the output caps, the cancellation grace period,
hclog JSON logs on stderr and exiting when the host goes away. It uses
grpcio's own TLS; nothing else.

A plugin declares its tools and calls serve():

    import kosong_plugin as kp

    def word_count(call, args):
        return kp.ok(str(len(args["text"].split())))

    kp.serve([kp.Tool("WordCount", "Count words.", {...schema...}, word_count)])

The generated stubs (gen-stubs.sh) are imported from ./gen beside this file.
"""

import base64
import datetime
import json
import os
import re
import secrets
import signal
import sys
import tempfile
import threading
import time
from concurrent import futures

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

try:
    import grpc
    from google.protobuf import json_format

    import grpc_broker_pb2_grpc
    import grpc_controller_pb2
    import grpc_controller_pb2_grpc
    import grpc_stdio_pb2_grpc
    import health_pb2
    import health_pb2_grpc
    import plugin_pb2 as pb
    import plugin_pb2_grpc
except ImportError as e:  # never print on stdout before the handshake line
    sys.stderr.write(
        "kosong_plugin: %s: install python3-grpcio and python3-grpc-tools and run gen-stubs.sh\n" % e
    )
    sys.exit(1)

# The handshake (docs/plugin-protocol.md, "Start-up").
MAGIC_COOKIE_KEY = "KOSONG_PLUGIN_MAGIC_COOKIE"
MAGIC_COOKIE_VALUE = "7c1e0f0a-kosong-host-tool-plugin"
CORE_PROTOCOL_VERSION = 1
PROTOCOL_VERSION = 1
TLS_FD_ENV = "KOSONG_PLUGIN_TLS_FD"
CANCEL_GRACE_ENV = "KOSONG_PLUGIN_CANCEL_GRACE"
LOG_LEVEL_ENV = "KOSONG_PLUGIN_LOG_LEVEL"
SERVER_NAME = "localhost"

# The duties (docs/plugin-protocol.md, "What the Go SDK does for you").
MAX_MESSAGE_BYTES = 16 << 20
MAX_OUTPUT_CHARS = 50_000
MAX_OUTPUT_LINE_CHARS = 2_000
TRUNCATED_MARKER = "[...truncated]"
DEFAULT_CANCEL_GRACE = 5.0
BROKER_DIAL_TIMEOUT = 5.0

SDK_VERSION = "python-example/0.1.0"

_LEVELS = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "error": 4, "off": 9}


# ---- logging: hclog JSON lines on stderr, re-logged by the host ----


class Logger:
    def __init__(self, name="plugin", fields=None):
        self.name = name
        self.fields = fields or {}
        self.level = _LEVELS.get(os.environ.get(LOG_LEVEL_ENV, "info").lower(), 2)

    def named(self, name, **fields):
        lg = Logger(self.name + "." + name, {**self.fields, **fields})
        lg.level = self.level
        return lg

    def log(self, level, message, **fields):
        if _LEVELS[level] < self.level:
            return
        now = datetime.datetime.now(datetime.timezone.utc)
        entry = {
            "@level": level,
            "@message": message,
            "@module": self.name,
            "@timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            **self.fields,
            **fields,
        }
        sys.__stderr__.write(json.dumps(entry, default=str) + "\n")
        sys.__stderr__.flush()

    def debug(self, message, **fields):
        self.log("debug", message, **fields)

    def info(self, message, **fields):
        self.log("info", message, **fields)

    def warn(self, message, **fields):
        self.log("warn", message, **fields)

    def error(self, message, **fields):
        self.log("error", message, **fields)


log = Logger()


# ---- results ----


class Result:
    """A tool's answer: ok, error or rejected (see ok(), error(), rejected())."""

    def __init__(self, kind, output="", message="", brief="", feedback="", runtime=False):
        self.kind, self.output, self.message, self.brief = kind, output, message, brief
        self.feedback, self.runtime = feedback, runtime


def ok(output="", message="", brief=""):
    return Result("ok", output, message, brief)


def error(message, output="", brief=""):
    return Result("error", output, message, brief)


def rejected(feedback=""):
    return Result("rejected", feedback=feedback)


class Skip(Exception):
    """Raised by a tool's setup: the tool is left out, with this reason."""


def truncate_text(text, max_chars=MAX_OUTPUT_CHARS, max_line=MAX_OUTPUT_LINE_CHARS):
    """Cap text to max_chars characters in all and max_line a line, marking
    each cut with TRUNCATED_MARKER (markers and line breaks count towards the
    caps). Returns (text, cut)."""
    if len(text) <= max_chars and all(len(l.rstrip("\r")) <= max_line for l in text.split("\n")):
        return text, False
    out, budget, m = [], max_chars, len(TRUNCATED_MARKER)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        eol = "\n" if i < len(lines) - 1 else ""
        if line.endswith("\r"):
            line, eol = line[:-1], "\r" + eol
        if len(line) > max_line:
            line = line[: max(max_line - m, 0)] + TRUNCATED_MARKER
        piece = line + eol
        last = i == len(lines) - 1
        if len(piece) <= budget - m or (last and len(piece) <= budget):
            out.append(piece)
            budget -= len(piece)
            continue
        out.append(piece[: max(budget - m, 0)] + TRUNCATED_MARKER)
        break
    return "".join(out), True


def _to_proto(result, call_id, state_dir):
    if isinstance(result, str):
        result = ok(result)
    if not isinstance(result, Result):
        raise TypeError("a tool returned %r, not a Result or a string" % (result,))
    if result.kind == "rejected":
        return pb.CallResponse(rejected=pb.ToolRejected(feedback=result.feedback))
    text, cut = truncate_text(result.output or "")
    message = result.message
    if cut:
        note = "The output was truncated (at most %d characters in all and %d a line; cuts are marked %s)." % (
            MAX_OUTPUT_CHARS,
            MAX_OUTPUT_LINE_CHARS,
            TRUNCATED_MARKER,
        )
        if state_dir:
            path = os.path.join(state_dir, "outputs", _safe_name(call_id) + ".txt")
            try:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(result.output)
                note += " The full output (%d characters) is saved in %s." % (len(result.output), path)
            except OSError as e:
                note += " The full output could not be saved: %s." % e
        message = message + "\n" + note if message else note
    parts = [pb.ContentPart(text=text)] if text else []
    if result.kind == "ok":
        return pb.CallResponse(ok=pb.ToolOk(output=parts, message=message, brief=result.brief))
    return pb.CallResponse(
        error=pb.ToolError(output=parts, message=message, brief=result.brief, runtime=result.runtime)
    )


def _safe_name(call_id):
    name = re.sub(r"[^A-Za-z0-9._-]", "_", call_id or "unknown-call")
    return name if name.strip(".") else "call" + name


# ---- tools ----


class Tool:
    """One tool. handler(call, args) returns a Result or a string. setup(host,
    load_request), when given, runs at load time and may raise Skip (host is
    None when the tool asks for no capability). capabilities
    names the host capabilities the tool needs ("Environment", "Approval",
    "Session", "Config", "Progress"). read_only, destructive, idempotent and
    open_world say what the tool does; None (the default) leaves one
    unknown."""

    def __init__(self, name, description, parameters, handler, capabilities=(), timeout_ms=0, setup=None,
                 read_only=None, destructive=None, idempotent=None, open_world=None):
        self.name, self.description, self.parameters = name, description, parameters
        self.handler, self.capabilities = handler, list(capabilities)
        self.timeout_ms, self.setup = timeout_ms, setup
        self.annotations = {"read_only": read_only, "destructive": destructive,
                            "idempotent": idempotent, "open_world": open_world}


class Call:
    """What a handler gets besides its arguments: the call's id and tool, the
    host capabilities (None when the tool asked for none), a logger, and
    `cancelled`, an Event set when the host cancels the call or it times out
    (return promptly then: past the grace period the plugin exits).

    `trace_context` is the W3C trace context of the host's execute_tool span
    ({"traceparent": ..., "tracestate": ...}; empty when the host traces
    nothing). With OpenTelemetry for Python, a handler's spans nest under the
    host's tool call:

        from opentelemetry.propagate import extract
        with tracer.start_as_current_span("work", context=extract(call.trace_context)):
            ...

    and `traceparent_env()` passes it on to a command the handler runs."""

    def __init__(self, call_id, tool, host, session, logger, trace_context=None):
        self.id, self.tool, self.host, self.session, self.log = call_id, tool, host, session, logger
        self.trace_context = dict(trace_context or {})
        self.cancelled = threading.Event()

    def traceparent_env(self):
        """TRACEPARENT and TRACESTATE for a command's environment ({} when
        the host traces nothing)."""
        env = {}
        if self.trace_context.get("traceparent"):
            env["TRACEPARENT"] = self.trace_context["traceparent"]
        if self.trace_context.get("tracestate"):
            env["TRACESTATE"] = self.trace_context["tracestate"]
        return env

    def request_approval(self, action, description):
        """Ask the user (through the host) to approve an action of this call;
        returns (approved, feedback)."""
        r = self.host.approval.Request(
            pb.ApprovalRequest(tool_call_id=self.id, tool_name=self.tool, action=action, description=description)
        )
        return r.approved, r.feedback

    def report_progress(self, done, total=0.0, message=""):
        self.host.progress.Report(
            pb.ProgressReport(tool_call_id=self.id, tool_name=self.tool, progress=done, total=total, message=message)
        )


class HostClient:
    """Stubs of the host's capability server, on one brokered connection."""

    def __init__(self, channel):
        self.channel = channel
        self.approval = plugin_pb2_grpc.ApprovalStub(channel)
        self.environment = plugin_pb2_grpc.EnvironmentStub(channel)
        self.session = plugin_pb2_grpc.SessionStub(channel)
        self.config = plugin_pb2_grpc.ConfigStub(channel)
        self.progress = plugin_pb2_grpc.ProgressStub(channel)

    def close(self):
        self.channel.close()


# ---- go-plugin's services ----


class _Broker(grpc_broker_pb2_grpc.GRPCBrokerServicer):
    """The host opens GRPCBroker.StartStream once and sends a ConnInfo (id,
    network, address) for each server it serves on the broker: the capability
    server's arrives around the Load that names its id."""

    def __init__(self):
        self._cond = threading.Condition()
        self._conns = {}

    def StartStream(self, request_iterator, context):
        for info in request_iterator:
            if info.HasField("knock"):
                continue  # multiplexed brokering: kosong-host does not use it
            with self._cond:
                self._conns[info.service_id] = info
                self._cond.notify_all()
        return
        yield  # a response stream that sends nothing

    def wait(self, service_id, timeout=BROKER_DIAL_TIMEOUT):
        with self._cond:
            if not self._cond.wait_for(lambda: service_id in self._conns, timeout):
                raise TimeoutError("no connection info for broker id %d within %gs" % (service_id, timeout))
            return self._conns.pop(service_id)


class _Health(health_pb2_grpc.HealthServicer):
    SERVICES = ("", "plugin")

    def Check(self, request, context):
        if request.service not in self.SERVICES:
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service %r" % request.service)
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)

    def List(self, request, context):
        serving = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
        return health_pb2.HealthListResponse(statuses={s: serving for s in self.SERVICES})

    def Watch(self, request, context):
        ok_ = request.service in self.SERVICES
        yield health_pb2.HealthCheckResponse(
            status=health_pb2.HealthCheckResponse.SERVING if ok_ else health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
        )
        _wait_while_active(context)


class _Stdio(grpc_stdio_pb2_grpc.GRPCStdioServicer):
    """The host reads go-plugin's stdio stream once; this plugin writes its
    stray output to stderr instead, so the stream stays open and empty."""

    def StreamStdio(self, request, context):
        _wait_while_active(context)
        return
        yield


class _Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self, plugin):
        self.plugin = plugin

    def Shutdown(self, request, context):
        threading.Thread(target=self.plugin.stop, daemon=True).start()
        return grpc_controller_pb2.Empty()


_stopping = threading.Event()


def _wait_while_active(context):
    while context.is_active() and not _stopping.wait(0.5):
        pass


# ---- the Plugin service ----


class _Plugin(plugin_pb2_grpc.PluginServicer):
    def __init__(self, tools, broker, tls):
        self.order = [t.name for t in tools]
        self.tools = {t.name: t for t in tools}
        self.broker, self.tls = broker, tls
        self.lock = threading.Lock()
        self.loaded, self.host, self.session = set(), None, None
        self.grace = _cancel_grace()
        self.server = None

    def Describe(self, request, context):
        return describe(self.tools.values())

    def Load(self, request, context):
        names = list(request.tools) or self.order
        offered = set(request.capabilities)
        needed = {c for n in names if n in self.tools for c in self.tools[n].capabilities}
        host = None
        if needed and offered:
            host = self._dial_host(request.capability_broker_id, context)
        loads, loaded = [], set()
        for name in names:
            tl = pb.ToolLoad(name=name)
            tool = self.tools.get(name)
            missing = [c for c in (tool.capabilities if tool else []) if c not in offered]
            if tool is None:
                tl.status, tl.reason = pb.ToolLoad.STATUS_FAILED, "the plugin has no tool %r" % name
            elif missing:
                tl.status, tl.reason = pb.ToolLoad.STATUS_FAILED, "Tool dependency not found: " + ", ".join(missing)
            else:
                try:
                    if tool.setup:
                        tool.setup(host, request)
                    tl.status = pb.ToolLoad.STATUS_LOADED
                    loaded.add(name)
                except Skip as e:
                    tl.status, tl.reason = pb.ToolLoad.STATUS_SKIPPED, str(e)
                except Exception as e:  # a failed constructor fails its tool only
                    tl.status, tl.reason = pb.ToolLoad.STATUS_FAILED, "%s: %s" % (type(e).__name__, e)
            loads.append(tl)
        with self.lock:
            old = self.host
            self.loaded, self.host, self.session = loaded, host, request.session
        if old is not None:
            old.close()
        return pb.LoadResponse(tools=loads)

    def _dial_host(self, broker_id, context):
        try:
            info = self.broker.wait(broker_id)
        except TimeoutError as e:
            context.abort(grpc.StatusCode.UNAVAILABLE, "dial host capability server: %s" % e)
        target = "unix:" + info.address if info.network == "unix" else info.address
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ]
        if self.tls is None:
            return HostClient(grpc.insecure_channel(target, options=options))
        creds = grpc.ssl_channel_credentials(
            root_certificates=self.tls["peer_cert_pem"],
            private_key=self.tls["key_pem"],
            certificate_chain=self.tls["cert_pem"],
        )
        options.append(("grpc.ssl_target_name_override", SERVER_NAME))
        return HostClient(grpc.secure_channel(target, creds, options=options))

    def Call(self, request, context):
        with self.lock:
            loaded, host, session = request.tool_name in self.loaded, self.host, self.session
        if not loaded:
            return pb.CallResponse(
                error=pb.ToolError(message="tool %s is not loaded in this plugin" % request.tool_name, runtime=True)
            )
        tool = self.tools[request.tool_name]
        logger = log.named(tool.name, tool_call_id=request.tool_call_id)
        call = Call(request.tool_call_id, tool.name, host, session, logger, request.trace_context)
        done = threading.Event()

        def ended():
            # The RPC ended: finished, or cancelled by the host. A handler
            # still running gets the grace period, then the plugin exits so
            # the host restarts a process known to be sane.
            if done.is_set():
                return
            call.cancelled.set()

            def overrun():
                if not done.is_set():
                    log.error(
                        "tool did not return after its call was cancelled; exiting so the host restarts the plugin",
                        tool=tool.name,
                        id=request.tool_call_id,
                        grace="%gs" % self.grace,
                    )
                    _exit_with_group(1)

            t = threading.Timer(self.grace, overrun)
            t.daemon = True
            t.start()

        context.add_callback(ended)
        try:
            args = json.loads(request.arguments or "{}")
            result = tool.handler(call, args)
        except Exception as e:
            logger.error("tool raised an exception", error="%s: %s" % (type(e).__name__, e))
            result = Result("error", message="tool %s failed: %s: %s" % (tool.name, type(e).__name__, e), runtime=True)
        finally:
            done.set()
        return _to_proto(result, request.tool_call_id, session.state_dir if session else "")

    def stop(self):
        _stopping.set()
        if self.server is not None:
            self.server.stop(grace=1).wait()


def describe(tools):
    return pb.DescribeResponse(
        sdk_version=SDK_VERSION,
        tools=[
            pb.ToolSpec(
                name=t.name,
                description=t.description,
                parameters_schema=json.dumps(t.parameters),
                capabilities=t.capabilities,
                default_timeout_ms=t.timeout_ms,
                annotations=_annotations(t),
            )
            for t in tools
        ],
    )


def _annotations(tool):
    """The tool's declared annotations; None (absent on the wire: all
    unknown) when it declares none."""
    hint = {True: pb.ToolAnnotations.HINT_TRUE, False: pb.ToolAnnotations.HINT_FALSE}
    declared = {k: hint[bool(v)] for k, v in tool.annotations.items() if v is not None}
    return pb.ToolAnnotations(**declared) if declared else None


# ---- start-up ----


def _cancel_grace():
    """KOSONG_PLUGIN_CANCEL_GRACE is a Go duration ("5s", "1m30s", "250ms")."""
    text = os.environ.get(CANCEL_GRACE_ENV, "")
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)", text)
    if text and "".join(n + u for n, u in parts) == text:
        seconds = sum(float(n) * units[u] for n, u in parts)
        if seconds > 0:
            return seconds
    return DEFAULT_CANCEL_GRACE


def _read_tls():
    """The one-time TLS material: a JSON object on the inherited descriptor
    named by KOSONG_PLUGIN_TLS_FD, each field the base64 of PEM text."""
    fd_text = os.environ.get(TLS_FD_ENV, "")
    if not fd_text:
        return None
    if not fd_text.isdigit() or int(fd_text) < 3:
        raise SystemExit("plugin TLS: %s=%r is not an inherited file descriptor" % (TLS_FD_ENV, fd_text))
    try:
        with os.fdopen(int(fd_text), "rb") as f:
            bundle = json.loads(f.read(1 << 20))
        return {k: base64.b64decode(bundle[k], validate=True) for k in ("cert_pem", "key_pem", "peer_cert_pem")}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit("plugin TLS: descriptor %s: %s: %s" % (fd_text, type(e).__name__, e))


def _exit_with_group(code):
    """Exit, taking the processes this plugin started with it (the host makes
    the plugin the leader of its own process group)."""
    sys.__stderr__.flush()
    if hasattr(os, "killpg") and os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(code)


def _watch_parent():
    ppid = os.getppid()
    signal.signal(signal.SIGTERM, lambda *_: _exit_with_group(1))  # Pdeathsig on Linux
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the host stops its plugins, not Ctrl-C

    def poll():
        while True:
            time.sleep(0.25)
            if os.getppid() != ppid:
                _exit_with_group(1)

    if ppid > 1:
        threading.Thread(target=poll, daemon=True).start()


def serve(tools):
    """Serve the tools to the kosong-host that started this process; returns
    (exits) when the host ends the plugin. Run by hand with --describe, print
    the tools as JSON."""
    if sys.argv[1:2] == ["--describe"]:
        print(json_format.MessageToJson(describe(tools)))
        return
    if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        sys.stderr.write(
            "this program is a kosong-host tool plugin: kosong-host starts it (list its tools with --describe)\n"
        )
        sys.exit(1)
    offered = [v for v in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", "").split(",") if v]
    if offered and str(PROTOCOL_VERSION) not in offered:
        sys.stderr.write(
            "plugin protocol: the host speaks versions %s, this plugin %d\n" % (",".join(offered), PROTOCOL_VERSION)
        )
        sys.exit(1)
    tls = _read_tls()

    broker = _Broker()
    plugin = _Plugin(tools, broker, tls)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=32),
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )
    plugin.server = server
    plugin_pb2_grpc.add_PluginServicer_to_server(plugin, server)
    health_pb2_grpc.add_HealthServicer_to_server(_Health(), server)
    grpc_broker_pb2_grpc.add_GRPCBrokerServicer_to_server(broker, server)
    grpc_controller_pb2_grpc.add_GRPCControllerServicer_to_server(_Controller(plugin), server)
    grpc_stdio_pb2_grpc.add_GRPCStdioServicer_to_server(_Stdio(), server)

    if tls is not None:
        creds = grpc.ssl_server_credentials(
            [(tls["key_pem"], tls["cert_pem"])], root_certificates=tls["peer_cert_pem"], require_client_auth=True
        )
        bind = lambda addr: server.add_secure_port(addr, creds)
    else:
        bind = server.add_insecure_port
    socket_path = None
    if os.name == "posix":
        sock_dir = os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or tempfile.gettempdir()
        socket_path = os.path.join(sock_dir, "plugin" + secrets.token_hex(6))
        bind("unix:" + socket_path)
        network, address = "unix", socket_path
    else:
        port = bind("127.0.0.1:0")
        network, address = "tcp", "127.0.0.1:%d" % port
    server.start()

    sys.stdout.write("%d|%d|%s|%s|grpc\n" % (CORE_PROTOCOL_VERSION, PROTOCOL_VERSION, network, address))
    sys.stdout.flush()
    # The host reads nothing more from stdout: stray prints go to stderr,
    # which it keeps (and quotes when the plugin fails).
    sys.stdout = sys.stderr
    _watch_parent()
    log.debug("plugin address", network=network, address=address)
    try:
        server.wait_for_termination()
    finally:
        if socket_path and os.path.exists(socket_path):
            os.remove(socket_path)
    sys.__stderr__.flush()
    os._exit(0)
