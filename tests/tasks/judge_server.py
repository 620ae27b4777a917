"""A scripted OpenAI-compatible judge for tests: verdicts follow markers in the prompts.

Arena-Hard: the question holds `case=<name>`; CASES[name] = (verdict when the model is B,
verdict when the model is A); the game order is read from where "REFERENCE-ANSWER" appears.
Special cases: `fail` answers HTTP 500 every time, `ratelimit` answers 429 with Retry-After
once and then the scripted verdict, `garbage` answers text with no verdict.
HealthBench: the rubric criterion ends in [met] / [unmet] / [fail].
`fail_first = N`: the first N requests answer HTTP 500 whatever they ask (an outage that passes).
`contrarians`: judge model names that always disagree: the mirrored Arena verdict (A>B becomes
B>A, a tie stays a tie) and the opposite HealthBench grade.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CASES = {
    "c1": ("B>>A", "A>B"),
    "c2": ("A=B", "B>A"),
    "c3": ("A>>B", "B>>A"),
    "c4": ("B>>A", "B>A"),
    "c5": ("A=B", "B>>A"),
    "ratelimit": ("B>A", "A>B"),
}


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog (5) refuses connections under 16 concurrent judge calls
    daemon_threads = True


class ScriptedJudge:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        self.rate_limited: set[str] = set()
        self.fail_first = 0
        self.contrarians: set[str] = set()
        self._lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                judge.requests.append(body)
                judge.auth.append(self.headers.get("Authorization"))
                status, text, headers = judge.answer(body)
                payload = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": text}}]}
                    if status == 200
                    else {"error": "scripted"}
                ).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, body: dict) -> tuple[int, str, dict]:
        with self._lock:
            if self.fail_first > 0:
                self.fail_first -= 1
                return 500, "", {}
        text = "\n".join(m["content"] for m in body["messages"])
        if "# Rubric item" in text:
            item = text.split("# Rubric item", 1)[1]
            if "[fail]" in item.split("# Instructions")[0]:
                return 500, "", {}
            met = ("[met]" in item.split("# Instructions")[0]) != (body.get("model") in self.contrarians)
            return 200, "```json\n" + json.dumps({"explanation": "scripted", "criteria_met": met}) + "\n```", {}
        case = re.search(r"case=(\w+)", text).group(1)
        if case == "fail":
            return 500, "", {}
        if case == "garbage":
            return 200, "I cannot decide.", {}
        a_block = text.split("<|The Start of Assistant A's Answer|>", 1)[1].split(
            "<|The End of Assistant A's Answer|>"
        )[0]
        model_is = "B" if "REFERENCE-ANSWER" in a_block else "A"
        if case == "ratelimit":
            key = json.dumps(body, sort_keys=True)
            if key not in self.rate_limited:
                self.rate_limited.add(key)
                return 429, "", {"Retry-After": "1"}
        verdict = CASES[case][0 if model_is == "B" else 1]
        if body.get("model") in self.contrarians:
            verdict = verdict.translate(str.maketrans("AB", "BA"))
        return 200, f"Reasoning... My final verdict is: [[{verdict}]]", {}

    def __enter__(self) -> ScriptedJudge:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
