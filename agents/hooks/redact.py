#!/usr/bin/env python3
"""tool_result hook: hides the values of KEY=value pairs whose key looks secret in bash output."""
import json
import re
import sys

SECRET = re.compile(r"\b([A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|API_KEY)[A-Z0-9_]*)=\S+")

event = json.load(sys.stdin)
changed = False
content = []
for block in event.get("content", []):
    if block.get("type") == "text":
        text = SECRET.sub(r"\1=[redacted]", block["text"])
        changed = changed or text != block["text"]
        block = dict(block, text=text)
    content.append(block)
if changed:
    json.dump({"content": content}, sys.stdout)
