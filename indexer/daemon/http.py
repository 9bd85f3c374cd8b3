"""`serve --http`: MCP over streamable HTTP and mem0's REST subset on loopback, inside the daemon (Starlette, uvicorn)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route

from indexer import log
from indexer.daemon import http_guard as guard
from indexer.daemon import mem0_api, mem0_platform, recall_api, review_api, ui_api, ui_auth, ui_health
from indexer.errors import CallerGoneError, ConflictError, InputError, MdmemError, NotFoundError, StoreError

START_TIMEOUT_S = 15.0
# the longest a stage waits to learn whether its client left: the loop answers in microseconds, and a loop too
# busy to answer must not add a pause to every stage of every search
GONE_CHECK_S = 0.05


def _status_of(exc: MdmemError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ConflictError):
        return 409
    return 400 if isinstance(exc, InputError) else 503


def _refuse(status: int, detail: str, exc: BaseException | None = None) -> JSONResponse:
    retry = getattr(exc, "retry_after", None)  # a busy writer: the job goes on, the caller may come back
    return JSONResponse({"detail": detail}, status_code=status,
                        headers={"Retry-After": str(retry)} if retry else None)


def _endpoint(handler, body: bool = False, params: tuple[str, ...] = (), query: bool = False, reads: bool = False):
    """An async route around a blocking mem0 handler: JSON in, JSON out, errors as {"detail": ...}.

    The handler gets the memory, then the path parameters, the query string and the body, in that order.
    reads: a search, which stops before its next stage once the client has closed its connection (a write
    always runs to its end).
    """

    async def endpoint(request: Request):
        args = [request.path_params[p] for p in params]
        if query:
            args.append(dict(request.query_params))
        if body:
            try:
                args.append(json.loads(await request.body() or b"null"))
            except ValueError as exc:
                return _refuse(400, f"the body is not valid JSON ({exc}); send an object such as "
                                    '{"query": "tea", "user_id": "alice"}')
        gone = _gone(request, asyncio.get_running_loop()) if reads else None
        try:
            return JSONResponse(await run_in_threadpool(_lent_call, request.app.state.lend, handler, args, gone))
        except CallerGoneError:
            log.get().info("http_search_abandoned", path=request.url.path, why="the client closed its connection")
            return Response(status_code=499)  # nobody reads it: the connection is closed
        except MdmemError as exc:
            return _refuse(_status_of(exc), str(exc), exc)
        except Exception as exc:  # never a traceback to the caller; the log has it
            log.get().exception("http_request_failed", path=request.url.path)
            return _refuse(500, f"internal error ({type(exc).__name__}); see the daemon's log")

    return endpoint


def _lent_call(lend, handler, args, gone=None):
    """The handler on a Memory lent for this call alone (on the worker thread that runs it)."""
    with lend() as mem:
        mem.gone = gone
        try:
            return handler(mem, *args)
        finally:
            mem.gone = None  # the Memory goes back to the pool: the next request is another client's


def _gone(request: Request, loop):
    """Whether the client has closed its connection, asked from the worker thread between a search's stages: a
    disconnect uvicorn has seen is read on the event loop at once, without waiting for more from the client."""

    def gone() -> bool:
        try:
            return asyncio.run_coroutine_threadsafe(request.is_disconnected(), loop).result(GONE_CHECK_S)
        except Exception:  # a loop shutting down or too busy to answer: the search runs on, as it always did
            return False
    return gone


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Unknown paths and methods answer in mem0's error shape too, saying what is served."""
    detail = exc.detail
    if exc.status_code == 404:
        detail = f"{request.method} {request.url.path} is not served; the mem0 section of docs/INTEGRATIONS.md lists the paths"
    return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))


ID = ("memory_id",)
# (path, methods, handler, what it takes); each is also served with a trailing slash, as mem0's SDK calls it
MEM0_ROUTES = [
    # the self-hosted server's paths
    ("/memories", ["POST"], mem0_api.add, {"body": True}),
    ("/memories", ["GET"], mem0_api.list_all, {"query": True}),
    ("/memories", ["DELETE"], mem0_api.delete_all, {"query": True}),
    ("/search", ["POST"], mem0_platform.search, {"body": True, "reads": True}),
    ("/reset", ["POST"], mem0_api.reset, {}),
    ("/memories/{memory_id}/history", ["GET"], mem0_api.history, {"params": ID}),
    ("/memories/{memory_id}", ["GET"], mem0_api.get, {"params": ID}),
    ("/memories/{memory_id}", ["PUT"], mem0_api.update, {"params": ID, "body": True}),
    ("/memories/{memory_id}", ["DELETE"], mem0_api.delete, {"params": ID}),
    ("/memories/{memory_id}/restore", ["POST"], mem0_api.restore, {"params": ID}),
    # the platform's, which mem0ai's MemoryClient and AsyncMemoryClient call
    ("/v1/ping", ["GET"], mem0_platform.ping, {}),
    ("/v3/memories/add", ["POST"], mem0_platform.add, {"body": True}),
    ("/v1/memories", ["POST"], mem0_platform.add, {"body": True}),
    ("/v1/memories", ["GET"], mem0_platform.get_all_v1, {"query": True}),
    ("/v1/memories", ["DELETE"], mem0_platform.delete_all, {"query": True}),
    ("/v1/memories/search", ["POST"], mem0_platform.search, {"body": True, "reads": True}),
    ("/v2/memories/search", ["POST"], mem0_platform.search, {"body": True, "reads": True}),
    ("/v3/memories/search", ["POST"], mem0_platform.search, {"body": True, "reads": True}),
    ("/v2/memories", ["POST"], mem0_platform.get_all, {"query": True, "body": True}),
    ("/v3/memories", ["POST"], mem0_platform.get_all, {"query": True, "body": True}),
    ("/v1/memories/{memory_id}/history", ["GET"], mem0_api.history, {"params": ID}),
    ("/v1/memories/{memory_id}", ["GET"], mem0_api.get, {"params": ID}),
    ("/v1/memories/{memory_id}", ["PUT"], mem0_api.update, {"params": ID, "body": True}),
    ("/v1/memories/{memory_id}", ["DELETE"], mem0_api.delete, {"params": ID}),
    ("/v1/memories/{memory_id}/restore", ["POST"], mem0_api.restore, {"params": ID}),
    ("/v1/batch", ["PUT"], mem0_platform.batch_update, {"body": True}),
    ("/v1/batch", ["DELETE"], mem0_platform.batch_delete, {"body": True}),
    ("/v1/entities", ["GET"], mem0_platform.entities, {}),
    ("/v2/entities/{kind}/{name}", ["DELETE"], mem0_platform.delete_entity, {"params": ("kind", "name")}),
    # mdmem's own: the recall block every client injects (SillyTavern's extension, OpenClaw's plugin)
    ("/v1/recall", ["POST"], recall_api.recall, {"body": True, "reads": True}),
    # what the memory browser (/ui/) reads beside the routes above
    ("/v1/ui/status", ["GET"], ui_health.status, {}),
    ("/v1/ui/doctor", ["POST"], ui_health.checks, {"body": True}),
    ("/v1/ui/memories", ["POST"], ui_api.memories, {"body": True}),
    ("/v1/ui/search", ["POST"], ui_api.search, {"body": True}),
    ("/v1/ui/memories/{memory_id}/history", ["GET"], ui_api.history, {"params": ID}),
    ("/v1/ui/memories/{memory_id}", ["GET"], ui_api.memory, {"params": ID}),
    ("/v1/ui/memories/{memory_id}", ["PUT"], ui_api.update, {"params": ID, "body": True}),
    ("/v1/ui/memories/{memory_id}", ["DELETE"], ui_api.forget, {"params": ID}),
    ("/v1/ui/memories/{memory_id}/restore", ["POST"], ui_api.restore, {"params": ID}),
    ("/v1/ui/supersede", ["POST"], ui_api.supersede, {"body": True}),
    ("/v1/ui/import", ["POST"], ui_api.import_path, {"body": True}),
    # the review queue of decisions made at write, and consolidation's proposals (docs/REVIEW.md)
    ("/v1/review", ["GET"], review_api.listing, {"query": True}),
    ("/v1/review/consolidate", ["POST"], review_api.consolidate, {"body": True}),
    *((f"/v1/review/{{decision_id}}/{action}", ["POST"], getattr(review_api, action),
       {"params": ("decision_id",), "body": True}) for action in ("accept", "reject", "undo", "edit")),
]


def mem0_routes() -> list[Route]:
    return [Route(path + slash, _endpoint(handler, **takes), methods=methods)
            for path, methods, handler, takes in MEM0_ROUTES for slash in ("", "/")]


def ui_routes() -> list[Route]:
    """The memory browser: its files, the one-time login link `mdmem ui` asks for, and the page's session."""
    folder = Path(__file__).parent / "ui"

    async def link(request: Request):
        code = request.app.state.ui.new_code()
        return JSONResponse({"url": f"http://{request.headers['host']}{ui_auth.LOGIN_PATH}?code={code}",
                             "expires_in": int(ui_auth.CODE_TTL_S)})

    async def login(request: Request):
        secret = request.app.state.ui.redeem(request.query_params.get("code"))
        if secret is None:
            return Response("This login link is spent or expired; run `mdmem ui` for a new one.\n", 401,
                            media_type="text/plain", headers=ui_auth.PAGE_HEADERS)
        page = RedirectResponse("/ui/", 303, headers=ui_auth.PAGE_HEADERS)
        page.set_cookie(ui_auth.cookie_name(request.headers.get("host")), secret, max_age=int(ui_auth.SESSION_TTL_S),
                        path="/", httponly=True, samesite="strict")
        return page

    async def session(request: Request):
        return JSONResponse({"csrf": request.app.state.ui.csrf(request.headers)},
                            headers={"Cache-Control": "no-store"})

    async def asset(request: Request):
        name = request.path_params.get("name") or "index.html"
        if name not in ui_auth.ASSETS:
            raise HTTPException(404)
        return Response((folder / name).read_bytes(), media_type=ui_auth.ASSETS[name], headers=ui_auth.PAGE_HEADERS)

    return [Route("/v1/ui/link", link, methods=["POST"]), Route("/v1/ui/link/", link, methods=["POST"]),
            Route(ui_auth.LOGIN_PATH, login, methods=["GET"]), Route("/ui/session", session, methods=["GET"]),
            Route("/", lambda _r: RedirectResponse("/ui/", 303), methods=["GET"]),
            Route("/ui", lambda _r: RedirectResponse("/ui/", 303), methods=["GET"]),
            Route("/ui/", asset, methods=["GET"]), Route("/ui/{name}", asset, methods=["GET"])]


class Guard:
    """ASGI middleware: loopback peer, Host and Origin (DNS rebinding), bearer token, body size; CORS for the
    pages `--allow-origin` names."""

    def __init__(self, app, token: str, allowed: frozenset[str], max_body: int, pages: frozenset[str] = frozenset(),
                 ui: ui_auth.UiSessions | None = None):
        self.app, self.token, self.allowed, self.max_body, self.pages = app, token, allowed, max_body, pages
        self.ui = ui or ui_auth.UiSessions()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin", "").strip().lower().rstrip("/")
        if origin in self.pages:
            if scope["method"] == "OPTIONS":  # a preflight carries no token; it only asks what may be sent
                return await Response(status_code=204, headers=dict(
                    (k.decode(), v.decode()) for k, v in guard.cors_headers(origin)))(scope, receive, send)
            send = _with_cors(send, origin)
        refusal = self._check(scope, headers)
        if refusal is not None:
            return await refusal(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_body:
                raise _TooLarge()
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            with contextlib.suppress(RuntimeError):  # a response already begun cannot be replaced
                await _refuse(413, self._too_large())(scope, receive, send)

    def _check(self, scope, headers: dict) -> JSONResponse | None:
        client = scope.get("client")
        if client and not guard.is_loopback(client[0]):
            return _refuse(403, "mdmem answers loopback callers only")
        if not guard.host_ok(headers.get("host"), self.allowed):
            return _refuse(421, f"Host {headers.get('host')!r} is not this server; call it as "
                                f"http://{sorted(self.allowed)[0]}")
        if not guard.origin_ok(headers.get("origin"), self.allowed, self.pages):
            return _refuse(403, f"Origin {headers.get('origin')!r} may not call mdmem; let that page in with "
                                f"`mdmem serve --http ... --allow-origin {headers.get('origin')}`")
        presented = guard.presented_token(headers.get("authorization"), headers.get("x-api-key"))
        if not guard.token_ok(presented, self.token) and not ui_auth.is_public(scope["path"]):
            refused = self.ui.admit(scope["method"], scope["path"], headers)  # the memory browser's cookie
            if refused is not None:
                return _refuse(*refused)
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > self.max_body:
            return _refuse(413, self._too_large())
        return None

    def _too_large(self) -> str:
        return f"the body is over {self.max_body} bytes; send fewer memories per request"


class _TooLarge(Exception):
    pass


def _with_cors(send, origin: str):
    """`send` with the CORS headers added to the response's start, refusals included (the page reads why)."""

    async def wrapped(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": list(message.get("headers", [])) + guard.cors_headers(origin)}
        await send(message)
    return wrapped


def build_app(lend, token: str, allowed: frozenset[str], mcp_server=None, max_body: int = guard.MAX_BODY,
              pages: frozenset[str] = frozenset()):
    """The Starlette app: mem0's paths, MCP at /mcp when a server is given, everything behind Guard. `lend()`
    gives a Memory for one call (`with lend() as mem:`)."""
    routes = mem0_routes() + ui_routes()
    mcp_app = None
    if mcp_server is not None:
        mcp_app = mcp_server.streamable_http_app(streamable_http_path="/mcp", max_request_body_size=max_body)
        for status in (404, 405):  # mounted at /, it answers every path the routes above do not
            mcp_app.add_exception_handler(status, _http_error)
        routes.append(Mount("/", app=mcp_app))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if mcp_app is None:
            yield
            return
        async with mcp_app.router.lifespan_context(mcp_app):  # the MCP session manager's task group
            yield

    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: _http_error, 405: _http_error})
    app.state.lend = lend
    app.state.ui = ui_auth.UiSessions()
    app.add_middleware(Guard, token=token, allowed=allowed, max_body=max_body, pages=pages, ui=app.state.ui)
    return app


class HttpServer:
    """uvicorn on a thread of the daemon, on a socket bound before it starts (a busy port fails `serve` at once)."""

    def __init__(self, daemon, listen: str, mcp_factory=None, pages: tuple[str, ...] = ()):
        self.host, self.port = guard.parse_listen(listen)
        self.pages = frozenset(guard.parse_origin(p) for p in pages)
        self.daemon = daemon
        self.mcp_factory = mcp_factory
        self.token_file = guard.token_path(daemon.cfg.home)
        self._server = None
        self._thread = None

    def start(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise StoreError(f"cannot listen on {self.host}:{self.port} ({exc.strerror}); choose another port "
                             "with --http 127.0.0.1:PORT") from None
        self.port = sock.getsockname()[1]
        mcp_server = self.mcp_factory(self.daemon.lend, self.daemon.cfg) if self.mcp_factory else None
        app = build_app(self.daemon.lend, guard.load_token(self.daemon.cfg.home), guard.allowed_hosts(self.host, self.port),
                        mcp_server, pages=self.pages)
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", server_header=False,
                                timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, name="mdmem-http",
                                        daemon=True)
        self._thread.start()
        for _ in range(int(START_TIMEOUT_S / 0.05)):
            if self._server.started or not self._thread.is_alive():
                break
            self._thread.join(0.05)
        if not self._server.started:
            raise StoreError(f"the HTTP server on {self.host}:{self.port} did not start; see the log")
        log.get().info("http_ready", url=f"http://{self.host}:{self.port}", mcp=mcp_server is not None,
                       token_file=str(self.token_file))

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(10)
