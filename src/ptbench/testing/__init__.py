"""A scripted model provider: speaks the agent CLIs' wire formats and plays a script of turns."""

from ptbench.testing.script import ApiError, Script, Turn, WriteFile, load_script

__all__ = ["ApiError", "Script", "ScriptedProvider", "Turn", "WriteFile", "load_script", "provider_in_thread"]


def __getattr__(name: str):  # aiohttp is imported only when the server is used
    if name in ("ScriptedProvider", "provider_in_thread"):
        from ptbench.testing import server

        return getattr(server, name)
    raise AttributeError(name)
