#!/usr/bin/env python3
"""An alisio-lsp compaction hook: keeps the session's open questions across compactions.

beforeCompact asks the summarizer, in the same call as the checkpoint, for an "openQuestions" field;
afterCompact receives the checkpoint and that field, and puts the questions back after the checkpoint.
Configure it with:
  "plugins": [{"name": "open-questions", "command": "python3", "args": ["docs/plugins/open-questions.py"]}]
"""
import json
import sys

request = json.load(sys.stdin)
if request["v"] != 1:
    sys.exit("unsupported hook protocol version %r" % request["v"])

if request["hook"] == "beforeCompact":
    reply = {
        "instructions": "list the questions the user or the agent raised that are still unanswered",
        "outputFields": {"openQuestions": {"type": "array", "items": {"type": "string"}}},
    }
else:  # afterCompact
    questions = request.get("fields", {}).get("openQuestions", [])
    reply = {"report": {"summary": "%d open question(s) kept" % len(questions)}}
    if questions:
        reply["injectContext"] = "Still open:\n" + "\n".join("- " + q for q in questions)

json.dump(reply, sys.stdout)
