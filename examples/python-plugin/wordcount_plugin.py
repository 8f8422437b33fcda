#!/usr/bin/env python3
"""A kosong-host tool plugin in Python: WordCount (a typed tool), WhereAmI
(a tool that uses the host's Environment capability) and Countdown (a long
call that reports Progress and stops when cancelled). See README.md."""

import datetime

import kosong_plugin as kp


def word_count(call, args):
    text = args["text"]
    words, lines = len(text.split()), len(text.splitlines())
    if args.get("per_line"):
        counts = [str(len(line.split())) for line in text.splitlines()]
        return kp.ok("\n".join(counts), brief="%d words" % words)
    return kp.ok("%d words, %d lines, %d characters" % (words, lines, len(text)), brief="%d words" % words)


def where_am_i(call, args):
    env = call.host.environment.Get(kp.pb.EnvironmentRequest())
    now = datetime.datetime.fromtimestamp(env.now_unix_nano / 1e9, datetime.timezone.utc)
    call.log.info("environment fetched", os=env.os)
    return kp.ok(
        "os: %s\nshell: %s (%s)\nwork dir: %s\nhost time: %s"
        % (env.os, env.shell_name, env.shell_path, env.work_dir, now.isoformat(timespec="seconds"))
    )


def countdown(call, args):
    steps, pause = args["steps"], args["step_ms"] / 1000
    for i in range(1, steps + 1):
        # Wait on the cancellation, not time.sleep: a cancelled or timed-out
        # call must return within the grace period.
        if call.cancelled.wait(pause):
            call.log.info("countdown cancelled", step=i - 1)
            return kp.error("cancelled after %d of %d steps" % (i - 1, steps))
        if args["report"]:
            call.report_progress(i, steps, "step %d" % i)
    return kp.ok("%d steps" % steps)


TOOLS = [
    kp.Tool(
        "WordCount",
        "Count the words, lines and characters of a text.",
        {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to count."},
                "per_line": {"type": "boolean", "default": False, "description": "Count each line's words instead."},
            },
            "required": ["text"],
            "additionalProperties": False,
        },
        word_count,
        read_only=True,
        open_world=False,
    ),
    kp.Tool(
        "WhereAmI",
        "Tell the operating system, shell and working directory of the host.",
        {"type": "object", "properties": {}, "additionalProperties": False},
        where_am_i,
        capabilities=["Environment"],
    ),
    kp.Tool(
        "Countdown",
        "Count steps, pausing between them, and report progress.",
        {
            "type": "object",
            "properties": {
                "steps": {"type": "integer", "minimum": 1, "maximum": 100},
                "step_ms": {"type": "integer", "minimum": 1, "default": 300},
                "report": {"type": "boolean", "default": True, "description": "Report progress after each step."},
            },
            "required": ["steps"],
            "additionalProperties": False,
        },
        countdown,
        capabilities=["Progress"],
    ),
]

if __name__ == "__main__":
    kp.serve(TOOLS)
