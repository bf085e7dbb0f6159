#!/bin/sh
# tool_call hook: appends the call (the event JSON from stdin) to .guarded/audit.jsonl in the working
# directory. It prints nothing, so the call goes ahead.
mkdir -p .guarded || exit 1
{ cat; echo; } >> .guarded/audit.jsonl
