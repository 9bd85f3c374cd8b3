"""The daemon's socket client: the same operations as `Memory`, answered by a running `mdmem serve`.

Imported by the thin command line on every call: it loads no model, binding, numpy or segmenter.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import socket
import tempfile
from pathlib import Path

from indexer import errors
from indexer.config import Config
from indexer.errors import MdmemError
from indexer.models import Hit, SyncReport, VerifyReport
from indexer.protocol import OPERATIONS, MemoryAPI

MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes on Linux


def socket_path(cfg: Config, env=None) -> Path:
    """Where the daemon serving this global store listens: $XDG_RUNTIME_DIR, else the global store, else /tmp.

    Keyed by the global store alone: its lock lets one daemon serve it, and that daemon serves every
    command using it, whatever project the command runs in (it takes the project on when asked).
    """
    env = os.environ if env is None else env
    key = hashlib.sha256(f"{cfg.home}".encode()).hexdigest()[:16]
    candidates = []
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        candidates.append(Path(runtime) / f"mdmem-{key}.sock")
    candidates.append(cfg.home / f".mdmem-{key}.sock")  # a dot name: never taken for a note
    candidates.append(Path(tempfile.gettempdir()) / f"mdmem-{os.getuid()}" / f"{key}.sock")
    for path in candidates:
        if len(os.fsencode(str(path))) <= MAX_SOCKET_PATH:
            return path
    raise MdmemError("no socket path short enough for these stores; set XDG_RUNTIME_DIR to a short folder")


class Client:
    """One connection to a running daemon; calls are sequential on it."""

    def __init__(self, path: Path, timeout: float | None = None, context: dict | None = None):
        self.context = context or {}  # sent with every request: the caller's project, flags the daemon must honour
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self._file = self.sock.makefile("rwb")

    def call(self, method: str, params: dict | None = None, progress=None, timeout: float | None = None):
        """Send one request and read its answer; `timeout` bounds each wait for a line (progress resets it)."""
        if timeout is not None:
            self.sock.settimeout(timeout)
        self._file.write((json.dumps({"method": method, "params": params or {}, **self.context}) + "\n").encode())
        self._file.flush()
        try:
            return self._answer(progress)
        except TimeoutError:
            raise errors.WriterBusyError(f"the daemon did not answer {method} within {self.sock.gettimeout():g} s; "
                                         "retry, and if it persists see its log (`journalctl --user -u mdmem`)",
                                         retry_after=5) from None

    def _answer(self, progress):
        for line in self._file:
            msg = json.loads(line)
            if "progress" in msg:
                if progress:
                    progress(*msg["progress"])
                continue
            if "error" in msg:
                err = msg["error"]
                cls = getattr(errors, err.get("type", ""), None)
                if not (isinstance(cls, type) and issubclass(cls, MdmemError)):
                    cls = MdmemError
                exc = cls(err["message"])
                exc.exit_code = err.get("exit_code", 1)
                exc.retry_after = err.get("retry_after")
                raise exc
            return msg["result"]
        raise MdmemError("the daemon closed the connection; see its log (`journalctl --user -u mdmem`)")

    def close(self) -> None:
        try:
            self._file.close()
            self.sock.close()
        except OSError:
            pass


def context_of(cfg: Config, flags: dict | None = None) -> dict:
    """What a request tells the daemon about its caller: the project it works in, and the flags given."""
    return {"project": str(cfg.project) if cfg.project else None, "expect": dict(flags or {})}


def connect(cfg: Config, timeout: float | None = None, flags: dict | None = None) -> Client | None:
    """A client when a daemon serves this global store, else None (callers then work in-process)."""
    try:
        path = socket_path(cfg)
    except MdmemError:
        return None
    if not path.exists():
        return None
    try:
        return Client(path, timeout, context_of(cfg, flags))
    except OSError:
        return None  # a socket left by a killed daemon: nobody listens


def _reports(found) -> list[SyncReport]:
    return [SyncReport(**r) for r in found]


# how each operation's JSON answer becomes what `Memory` returns
_DECODE = {
    "search": lambda found: [Hit(**h) for h in found],
    "index": _reports,
    "rebuild": _reports,
    "verify": lambda found: [VerifyReport.from_dict(r) for r in found],
}


def _remote(name: str):
    """A method with the Protocol's own signature that sends its arguments to the daemon."""
    sig = inspect.signature(getattr(MemoryAPI, name))

    def call(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        params = {k: v for k, v in bound.arguments.items() if k != "self"}
        progress = params.pop("progress", None)
        if "under" in params:
            params["under"] = list(params["under"] or ())
        found = self.client.call(name, params, progress, timeout=self.deadline(name))
        return _DECODE.get(name, lambda x: x)(found)

    call.__name__ = call.__qualname__ = name
    call.__signature__ = sig
    call.__doc__ = getattr(MemoryAPI, name).__doc__
    return call


# operations that wait for store-wide writer jobs; the others wait for at most a few short writes
LONG_OPERATIONS = ("index", "rebuild", "verify", "decay", "cleanup", "import_notes")
DEADLINE_MARGIN_S = 30.0  # past the daemon's own deadline: the daemon's one-line answer comes first


class RemoteMemory:
    """`Memory`'s operations answered by the daemon (warm model, the store's one writer)."""

    def __init__(self, client: Client, cfg: Config | None = None):
        self.client = client
        self.cfg = cfg or Config()

    def deadline(self, operation: str) -> float:
        """How long the client waits for the daemon's next line: never forever."""
        if operation in LONG_OPERATIONS:
            return self.cfg.job_timeout_s + DEADLINE_MARGIN_S
        return 3 * self.cfg.write_timeout_s + DEADLINE_MARGIN_S  # an add: a reinforcement, then its indexing

    def close(self) -> None:
        self.client.close()


for _name in OPERATIONS:
    setattr(RemoteMemory, _name, _remote(_name))


def remote_memory(cfg: Config, flags: dict | None = None) -> RemoteMemory | None:
    client = connect(cfg, flags=flags)
    return RemoteMemory(client, cfg) if client else None
