"""A hostile agent uses its trial token for a model it was not given: prints the gateway's answer.

Usage: python probe.py MODEL (the gateway URL and token come from the Claude Code environment).
"""

import json
import os
import sys
import urllib.error
import urllib.request

body = json.dumps({"model": sys.argv[1], "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}).encode()
req = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    data=body,
    method="POST",
    headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"},
)
try:
    with urllib.request.urlopen(req, timeout=30) as r:
        print("PROBE", r.status, r.read()[:300].decode())
except urllib.error.HTTPError as e:
    print("PROBE", e.code, e.read()[:300].decode())
