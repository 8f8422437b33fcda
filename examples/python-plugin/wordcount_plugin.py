#!/usr/bin/env python3
"""A kosong-host tool plugin in Python: WordCount (a typed tool) and WhereAmI
(a tool that uses the host's Environment capability). See README.md."""

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
    ),
    kp.Tool(
        "WhereAmI",
        "Tell the operating system, shell and working directory of the host.",
        {"type": "object", "properties": {}, "additionalProperties": False},
        where_am_i,
        capabilities=["Environment"],
    ),
]

if __name__ == "__main__":
    kp.serve(TOOLS)
