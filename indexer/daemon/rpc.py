"""The daemon's query endpoint: newline-delimited JSON over a private Unix socket, and its client."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import socket
import struct
import socketserver
import tempfile
import threading
from pathlib import Path

from indexer import errors
from indexer import log
from indexer.config import Config
from indexer.errors import InputError, MdmemError
from indexer.models import Hit
from indexer.ops.sync import SyncReport

MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes on Linux
# Memory methods a reader may run; names missing on Memory (e.g. before `recall` exists) are simply absent
READER_METHODS = ("search", "stats", "recall", "add", "get", "recent", "update", "forget", "forget_matching")
# update, forget and forget_matching write notes like add does: to become writer jobs with it
WRITER_JOBS = ("decay", "cleanup")  # done by the writer threads, so they never race indexing


def socket_path(cfg: Config, env=None) -> Path:
    """Where the daemon serving these stores listens: $XDG_RUNTIME_DIR, else the global store, else /tmp."""
    env = os.environ if env is None else env
    key = hashlib.sha256(f"{cfg.home}\0{cfg.project or ''}".encode()).hexdigest()[:16]
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


def jsonable(value, explain: bool = False):
    """Results of any whitelisted method as plain JSON (hits, reports, dataclasses, containers)."""
    if isinstance(value, Hit):
        return value.to_dict(explain)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), explain)
    if isinstance(value, dict):
        return {str(k): jsonable(v, explain) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v, explain) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


# ---- server ---------------------------------------------------------------------------------------

def peer_uid(sock) -> int | None:
    """The connecting process's user id (Linux SO_PEERCRED), or None where the OS cannot say."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        uid = peer_uid(self.connection)
        if uid is not None and uid != os.getuid():
            # file mode 0600 already keeps others out; this also covers a socket reached via a shared folder
            self._send({"error": {"type": "MdmemError", "message": "this mdmem daemon serves only its owner",
                                  "exit_code": 1}})
            return
        try:
            self._serve_lines()
        except (BrokenPipeError, ConnectionResetError):
            return  # the caller went away (e.g. Ctrl-C); nothing to answer

    def _serve_lines(self) -> None:
        for line in self.rfile:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                method, params = request["method"], request.get("params") or {}
                if not isinstance(params, dict):
                    raise InputError("params must be a JSON object")
                result = self.server.owner.dispatch(method, params, self._progress)
                self._send({"result": result})
            except (ValueError, KeyError, TypeError) as exc:
                self._send({"error": {"type": "InputError", "message": f"bad request ({exc}); send "
                                      '{"method": "...", "params": {...}} on one line', "exit_code": 2}})
            except MdmemError as exc:
                self._send({"error": {"type": type(exc).__name__, "message": str(exc), "exit_code": exc.exit_code}})
            except Exception as exc:  # a failing request must not take the server down
                log.get().exception("request_failed")
                self._send({"error": {"type": "MdmemError", "message": f"daemon error: {exc}", "exit_code": 1}})

    def _progress(self, done: int, total: int) -> None:
        self._send({"progress": [done, total]})

    def _send(self, obj) -> None:
        self.wfile.write((json.dumps(obj, ensure_ascii=False) + "\n").encode())
        self.wfile.flush()


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True  # a client that never hangs up must not keep the daemon alive


class Server:
    """Serves requests concurrently with the writers; each request borrows a reader Memory."""

    def __init__(self, cfg: Config, daemon):
        self.cfg = cfg
        self.daemon = daemon
        self.path = socket_path(cfg)
        self._server = None
        self._thread = None

    def start(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.path.parent.stat().st_uid != os.getuid():
            raise MdmemError(f"{self.path.parent} belongs to another user; set XDG_RUNTIME_DIR to a private folder")
        self.path.unlink(missing_ok=True)  # we hold the store locks, so any old socket is stale
        old = os.umask(0o177)  # created 0600 from the start: no window where others can connect
        try:
            self._server = _UnixServer(str(self.path), _Handler)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="mdmem-socket", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self.path.unlink(missing_ok=True)

    def dispatch(self, method: str, params: dict, progress):
        scope = params.get("scope", "all")
        if method == "ping":
            return {"pid": os.getpid()}
        if method == "status":
            return self.daemon.status()
        if method == "rebuild":
            return self.daemon.run_job("rebuild", scope, bool(params.get("no_cache")), progress)
        if method in WRITER_JOBS:
            return self.daemon.run_job(method, scope)
        from indexer.memory import Memory
        if method in READER_METHODS and callable(getattr(Memory, method, None)):
            mem = self.daemon.reader()
            try:
                return jsonable(getattr(mem, method)(**params), explain=bool(params.get("explain")))
            finally:
                self.daemon.give_back(mem)
        known = ["ping", "status", "rebuild", *WRITER_JOBS,
                 *(m for m in READER_METHODS if callable(getattr(Memory, m, None)))]
        raise InputError(f"unknown method {method!r}; the daemon serves {', '.join(known)}")


# ---- client ---------------------------------------------------------------------------------------

class Client:
    """One connection to a running daemon; calls are sequential on it."""

    def __init__(self, path: Path, timeout: float | None = None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self._file = self.sock.makefile("rwb")

    def call(self, method: str, params: dict | None = None, progress=None):
        self._file.write((json.dumps({"method": method, "params": params or {}}) + "\n").encode())
        self._file.flush()
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
                raise exc
            return msg["result"]
        raise MdmemError("the daemon closed the connection; see its log (`journalctl --user -u mdmem`)")

    def close(self) -> None:
        try:
            self._file.close()
            self.sock.close()
        except OSError:
            pass


def connect(cfg: Config, timeout: float | None = None) -> Client | None:
    """A client when a daemon serves these stores, else None (callers then work in-process)."""
    try:
        path = socket_path(cfg)
    except MdmemError:
        return None
    if not path.exists():
        return None
    try:
        return Client(path, timeout)
    except OSError:
        return None  # a socket left by a killed daemon: nobody listens


class RemoteMemory:
    """The parts of `Memory` the command line uses, answered by the daemon (warm model, no lock waits)."""

    def __init__(self, client: Client):
        self.client = client

    def search(self, query, mode=None, scope="all", limit=None, under=(), min_score=None, explain=False,
               bump=True, space=None) -> list[Hit]:
        found = self.client.call("search", {"query": query, "mode": mode, "scope": scope, "limit": limit,
                                            "under": list(under or ()), "min_score": min_score,
                                            "explain": explain, "bump": bump, "space": space})
        return [Hit(**h) for h in found]

    def rebuild(self, scope="all", no_cache=False, progress=None) -> list[SyncReport]:
        return [SyncReport(**r) for r in self.client.call("rebuild", {"scope": scope, "no_cache": no_cache}, progress)]

    def status(self, scope="all") -> dict:
        return {k: v for k, v in self.client.call("status").items() if scope in ("all", k)}

    def decay(self, scope="all") -> list[dict]:
        return self.client.call("decay", {"scope": scope})

    def cleanup(self, scope="all") -> list[dict]:
        return self.client.call("cleanup", {"scope": scope})

    def add(self, text, type="fact", importance=None, scope=None, file=None, redact=False, space=None) -> dict:
        return self.client.call("add", {"text": text, "type": type, "importance": importance, "scope": scope,
                                        "file": file, "redact": redact, "space": space})

    def recall(self, query, context=None, limit=None, max_chars=None, scope="all", space=None) -> dict:
        return self.client.call("recall", {"query": query, "context": context, "limit": limit,
                                           "max_chars": max_chars, "scope": scope, "space": space})

    def get(self, ref, space=None, scope="all") -> dict:
        return self.client.call("get", {"ref": ref, "space": space, "scope": scope})

    def recent(self, limit=10, scope="all", space=None) -> list[dict]:
        return self.client.call("recent", {"limit": limit, "scope": scope, "space": space})

    def update(self, id, text, space=None, expected_hash=None, redact=False) -> dict:
        return self.client.call("update", {"id": id, "text": text, "space": space, "expected_hash": expected_hash,
                                           "redact": redact})

    def forget(self, id, space=None, expected_hash=None) -> dict:
        return self.client.call("forget", {"id": id, "space": space, "expected_hash": expected_hash})

    def forget_matching(self, query, space=None, yes=False, limit=None) -> dict:
        return self.client.call("forget_matching", {"query": query, "space": space, "yes": yes, "limit": limit})

    def close(self) -> None:
        self.client.close()


def remote_memory(cfg: Config) -> RemoteMemory | None:
    client = connect(cfg)
    return RemoteMemory(client) if client else None
