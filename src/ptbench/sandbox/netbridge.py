"""Inside a `network: gateway` sandbox: 127.0.0.1:<port> -> the trial gateway's Unix socket.

The sandbox has its own network namespace with loopback only, so nothing of the host or the
outside is reachable. The agent's CLI still calls the gateway at http://127.0.0.1:<port> (the URL
it was given); this bridge listens there and copies bytes to and from the gateway's Unix socket,
bound into the sandbox. It starts before the agent's command, which then replaces this process:

    python -I netbridge.py PORT SOCKET -- COMMAND...

Standard library only, run by path with -I: it must not depend on the agent's environment.
"""

from __future__ import annotations

import asyncio
import os
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()  # a half-close passes through
    except (ConnectionError, OSError):
        writer.close()


async def _serve(port: int, socket_path: str, ready_fd: int) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        up_writer.close()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    os.write(ready_fd, b"1")
    os.close(ready_fd)
    async with server:
        await server.serve_forever()


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: netbridge.py PORT SOCKET -- COMMAND...")
    port, socket_path, command = int(argv[0]), argv[1], argv[3:]
    read_fd, ready_fd = os.pipe()
    if os.fork() == 0:  # the bridge; it ends with the sandbox's PID namespace
        os.close(read_fd)
        os.setsid()
        asyncio.run(_serve(port, socket_path, ready_fd))
        os._exit(0)
    os.close(ready_fd)
    if os.read(read_fd, 1) != b"1":
        sys.exit(f"ptbench: the sandbox's bridge to the gateway could not listen on 127.0.0.1:{port}")
    os.close(read_fd)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
