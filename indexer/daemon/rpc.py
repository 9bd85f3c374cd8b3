"""The daemon's query endpoint: newline-delimited JSON over a private Unix socket (the client is indexer.remote)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import struct
import socketserver
import threading
from pathlib import Path

from indexer import log
from indexer.config import Config
from indexer.errors import InputError, MdmemError
from indexer.models import Hit
from indexer.protocol import OPERATIONS
from indexer.remote import socket_path


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
                result = self.server.owner.dispatch(method, params, self._progress, request)
                self._send({"result": result})
            except (ValueError, KeyError, TypeError) as exc:
                self._send({"error": {"type": "InputError", "message": f"bad request ({exc}); send "
                                      '{"method": "...", "params": {...}} on one line', "exit_code": 2}})
            except MdmemError as exc:
                self._send({"error": {"type": type(exc).__name__, "message": str(exc), "exit_code": exc.exit_code,
                                      "retry_after": getattr(exc, "retry_after", None)}})
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

    def dispatch(self, method: str, params: dict, progress, request: dict | None = None):
        """Run one request: reads on a pooled reader, every write as a job of the store's writer."""
        request = request or {}
        if method == "ping":
            return {"pid": os.getpid(), "embedder": self.daemon.cfg.embedder}
        if method not in OPERATIONS:
            raise InputError(f"unknown method {method!r}; the daemon serves ping, {', '.join(OPERATIONS)}")
        self._honour(request.get("expect") or {})
        if method in ("rebuild", "index", "import_notes"):
            params = {**params, "progress": progress}
        project = self.daemon.own_project
        if "project" in request:  # the caller's project: the daemon takes it on if it does not serve it yet
            project = Path(request["project"]) if request["project"] else None
            self.daemon.adopt(project)
        with self.daemon.lend(project) as mem:  # read-only connections; its writer hands writes to the writers
            return jsonable(getattr(mem, method)(**params), explain=bool(params.get("explain")))

    def _honour(self, expect: dict) -> None:
        """Refuse, in one line, a flag the daemon's warm model or stores cannot honour (never ignore it)."""
        for key, flag in (("embedder", "--embedder"), ("embedder_model", "--embedder-model"),
                          ("embedder_base_url", "--embedder-url")):
            wanted, have = expect.get(key), getattr(self.daemon.cfg, key)
            if wanted and wanted != have:
                raise InputError(f"{flag} {wanted} cannot be honoured: the running daemon (pid {os.getpid()}) uses "
                                 f"{have or 'the default'}; drop the flag, or stop the daemon to run in-process")
