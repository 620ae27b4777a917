"""The rollout client's own HTTP/1.1 (rollout/http.py) against a raw socket server that answers with
exactly the bytes each test scripts: the framings real servers use, and the ways they break."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from ptbench.bootcamp.rollout.client import ChatClient, ChatError
from ptbench.bootcamp.rollout.http import HttpPool
from ptbench.core.errors import UserError
from ptbench.core.retry import RetryPolicy

OK_BODY = b'{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{}}'

# Given the request's raw bytes and its index among all requests the server saw, the bytes to send
# back (a list: written one by one with a pause, so the client sees them in separate reads; a None in
# it closes the connection there), or None to close the connection without answering.
Script = Callable[[bytes, int], list[bytes | None] | None]


async def _serve(script: Script, requests: list[bytes]) -> tuple[asyncio.Server, str]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                raw = head + await reader.readexactly(length)
                requests.append(raw)
                parts = script(raw, len(requests) - 1)
                if parts is None:
                    break
                if None in parts:
                    parts = parts[: parts.index(None)]
                    closing = True
                else:
                    closing = False
                for part in parts:
                    assert part is not None
                    writer.write(part)
                    await writer.drain()
                    await asyncio.sleep(0.01)
                if closing:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/v1/chat/completions"


def _run(script: Script, body: bytes = b'{"x":1}', n: int = 1, **pool_kw: Any) -> tuple[list[Any], list[bytes], int]:
    """(responses or raised exceptions, raw requests seen, connections opened) for `n` sequential posts."""
    requests: list[bytes] = []

    async def main() -> tuple[list[Any], int]:
        server, url = await _serve(script, requests)
        pool = HttpPool(url, {"Content-Type": "application/json", **pool_kw}, limit=4, timeout_s=5)
        out: list[Any] = []
        try:
            for _ in range(n):
                try:
                    out.append(await pool.post(body))
                except Exception as exc:
                    out.append(exc)
        finally:
            pool.close()
            server.close()
        return out, pool.opened

    results, opened = asyncio.run(main())
    return results, requests, opened


def _head(status: str, headers: dict[str, str]) -> bytes:
    return (f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()


def test_content_length_answers_reuse_one_connection_and_the_request_is_well_formed() -> None:
    results, requests, opened = _run(
        lambda raw, i: [_head("200 OK", {"Content-Length": str(len(OK_BODY))}), OK_BODY],
        n=3,
        Authorization="Bearer k",
    )
    assert [r.status for r in results] == [200, 200, 200] and all(r.body == OK_BODY for r in results)
    assert opened == 1  # keep-alive: three requests, one connection
    head, _, body = requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions HTTP/1.1" and body == b'{"x":1}'
    assert b"Content-Length: 7" in lines and b"Authorization: Bearer k" in lines
    assert any(x.startswith(b"Host: 127.0.0.1:") for x in lines)


def test_chunked_answer_split_across_reads_with_extensions_and_trailers() -> None:
    chunks = [b"5;ext=1\r\n" + OK_BODY[:5] + b"\r\n", f"{len(OK_BODY) - 5:x}\r\n".encode() + OK_BODY[5:] + b"\r\n"]
    tail = b"0\r\nX-Trailer: 1\r\n\r\n"
    answer: list[bytes | None] = [_head("200 OK", {"Transfer-Encoding": "chunked"}), chunks[0][:3], chunks[0][3:]]
    results, _, opened = _run(lambda raw, i: [*answer, chunks[1], tail], n=2)
    assert [r.body for r in results] == [OK_BODY, OK_BODY] and opened == 1


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_compressed_answers_are_decoded(encoding: str) -> None:
    packed = gzip.compress(OK_BODY) if encoding == "gzip" else zlib.compress(OK_BODY)
    results, _, _ = _run(
        lambda raw, i: [_head("200 OK", {"Content-Length": str(len(packed)), "Content-Encoding": encoding}), packed]
    )
    assert results[0].body == OK_BODY


def test_connection_close_and_read_until_eof_open_a_new_connection_each_time() -> None:
    results, _, opened = _run(lambda raw, i: [_head("200 OK", {"Connection": "close"}), OK_BODY, None], n=2)
    # No length: the body is everything until the server closes the connection.
    assert [r.body for r in results] == [OK_BODY, OK_BODY] and opened == 2


def test_headers_and_statuses_other_than_200_come_back_as_they_are() -> None:
    results, _, _ = _run(
        lambda raw, i: [_head("429 Too Many Requests", {"Content-Length": "4", "Retry-After": "7"}), b"slow"]
    )
    assert results[0].status == 429 and results[0].headers["retry-after"] == "7" and results[0].body == b"slow"


@pytest.mark.parametrize(
    "answer",
    [
        [b"garbage\r\n\r\n"],  # not HTTP
        [_head("200 OK", {"Content-Length": "100"}), b"short", None],  # server closes mid-body
        [_head("200 OK", {"Content-Length": "2"}), b"okEXTRA"],  # more than it announced
        [_head("200 OK", {"Content-Length": "nope"})],
        [_head("200 OK", {"Transfer-Encoding": "chunked"}), b"zz\r\n"],
        [_head("200 OK", {"Content-Length": "3", "Content-Encoding": "br"}), b"abc"],
    ],
)
def test_broken_answers_are_os_errors_and_the_connection_is_not_reused(answer: list[bytes | None]) -> None:
    good: list[bytes | None] = [_head("200 OK", {"Content-Length": "2"}), b"ok"]
    results, _, opened = _run(lambda raw, i: answer if i == 0 else good, n=2)
    if answer[-1] == b"okEXTRA":  # the announced bytes are the answer; the rest makes the connection suspect
        assert results[0].body == b"ok"
    else:
        assert isinstance(results[0], OSError) and not isinstance(results[0], TimeoutError)
    assert results[1].body == b"ok" and opened == 2  # the broken connection was dropped, a new one works


def test_server_closing_without_an_answer_is_an_os_error() -> None:
    results, _, _ = _run(lambda raw, i: None)
    assert isinstance(results[0], OSError)


def test_not_an_http_url_is_one_line_for_the_user() -> None:
    async def main() -> None:
        async with ChatClient("ftp://example.org/v1", "m"):
            pass

    with pytest.raises(UserError, match="not an http"):
        asyncio.run(main())


def _chat(script: Script, timeout_s: float = 5.0) -> ChatError | Any:
    requests: list[bytes] = []

    async def main() -> Any:
        server, url = await _serve(script, requests)
        try:
            async with ChatClient(
                url, "m", timeout_s=timeout_s, retry=RetryPolicy(max_retries=0), concurrency=2
            ) as client:
                try:
                    return await client.chat([{"role": "user", "content": "x"}])
                except ChatError as exc:
                    return exc
        finally:
            server.close()

    return asyncio.run(main())


def test_chat_client_classifies_timeouts_drops_and_retry_after() -> None:
    hang = _chat(lambda raw, i: [_head("200 OK", {"Content-Length": "10"}), b"1", b"2"] + [b""] * 100, timeout_s=0.2)
    assert isinstance(hang, ChatError) and hang.kind == "timeout" and hang.retryable
    dropped = _chat(lambda raw, i: None)
    assert isinstance(dropped, ChatError) and dropped.kind == "connection" and dropped.retryable
    limited = _chat(lambda raw, i: [_head("429 Too Many Requests", {"Content-Length": "0", "Retry-After": "3"})])
    assert isinstance(limited, ChatError) and limited.kind == "rate_limited" and limited.retry_after == 3.0
    ok = _chat(lambda raw, i: [_head("200 OK", {"Content-Length": str(len(OK_BODY))}), OK_BODY])
    assert ok.message["content"] == "hi" and ok.finish_reason == "stop"


def _concurrent(script: Script, posts: int, *, limit: int, timeout_s: float) -> tuple[list[Any], int]:
    """(responses or raised exceptions, connections opened) for `posts` posts started at once."""
    requests: list[bytes] = []

    async def main() -> tuple[list[Any], int]:
        server, url = await _serve(script, requests)
        pool = HttpPool(url, {}, limit=limit, timeout_s=timeout_s)
        try:
            out = await asyncio.gather(*(pool.post(b"{}") for _ in range(posts)), return_exceptions=True)
        finally:
            pool.close()
            server.close()
        return list(out), pool.opened

    return asyncio.run(main())


def test_posts_beyond_the_limit_wait_for_a_connection_and_all_get_their_answer() -> None:
    results, opened = _concurrent(
        lambda raw, i: [_head("200 OK", {"Content-Length": "2"}), b"ok"], posts=6, limit=2, timeout_s=5
    )
    assert [r.body for r in results] == [b"ok"] * 6
    assert opened == 2  # the limit holds; the waiting posts reused the two connections


def test_a_post_that_waits_past_its_deadline_fails_and_gives_its_slot_back() -> None:
    # Limit 1: the first post holds the only connection and its answer never comes; the second
    # waits for the slot (or gets it when the first expires, and its own request hangs too). Both
    # time out; the third, answered, proves no slot was lost on the way.
    silent = [True]

    def script(raw: bytes, i: int) -> list[bytes | None]:
        if silent[0]:
            return [b""] * 500  # five seconds of silence
        return [_head("200 OK", {"Content-Length": "2"}), b"ok"]

    requests: list[bytes] = []

    async def main() -> list[Any]:
        server, url = await _serve(script, requests)
        pool = HttpPool(url, {}, limit=1, timeout_s=0.3)
        try:
            first = await asyncio.gather(pool.post(b"{}"), pool.post(b"{}"), return_exceptions=True)
            silent[0] = False
            return [*first, await pool.post(b"{}")]
        finally:
            pool.close()
            server.close()

    results = asyncio.run(main())
    assert isinstance(results[0], TimeoutError) and isinstance(results[1], TimeoutError)
    assert results[2].status == 200 and results[2].body == b"ok"
