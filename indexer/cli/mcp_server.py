"""`mdmem mcp`: the memory as an MCP server over stdio (search, recall, add, status; one resource per note)."""

from __future__ import annotations

try:  # mcp 2.x renamed FastMCP to MCPServer; 1.x clients and servers speak the same protocol
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.resources import FileResource
except ImportError:
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.server.fastmcp.resources import FileResource

from indexer.errors import MdmemError
from indexer.index.stores import store_roots
from indexer.notes.scanner import NoteFilter

MAX_NOTE_RESOURCES = 2000  # beyond this, listing resources costs clients more than it helps


def build_server(mem, cfg=None) -> FastMCP:
    """A FastMCP server bound to one memory backend (in-process Memory, or the daemon's client)."""
    cfg = cfg or mem.cfg
    server = FastMCP("mdmem", instructions=(
        "Long-term memory over the user's Markdown notes. Call memory_recall at the start of a task "
        "for relevant context, memory_search to look something up, memory_add to remember a lasting "
        "preference, fact or decision (never secrets)."))

    @server.tool()
    def memory_search(query: str, limit: int = 5, scope: str = "all", mode: str | None = None) -> list[dict]:
        """Hybrid (keyword + meaning) search over the notes; each hit has uri, lines, content, score."""
        try:
            return [h.to_dict() for h in mem.search(query, mode=mode, scope=scope, limit=limit)]
        except MdmemError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    def memory_recall(query: str, context: str = "", max_chars: int = 1500) -> str:
        """A prompt-ready block of the memories relevant to the query ('' when none)."""
        return mem.recall(query, context=context or None, max_chars=max_chars)["text"]

    @server.tool()
    def memory_add(text: str, type: str = "fact", importance: int | None = None, scope: str | None = None,
                   file: str | None = None, redact: bool = False) -> dict:
        """Remember one thing (type: preference|fact|decision|entity|episodic). Secrets are refused."""
        try:
            return mem.add(text, type=type, importance=importance, scope=scope, file=file, redact=redact)
        except MdmemError as exc:
            raise ToolError(str(exc)) from None  # the model reads the fix; the secret is never echoed

    @server.tool()
    def memory_status() -> dict:
        """Files, chunks and vectors per store, and where they live."""
        return mem.status()

    _add_note_resources(server, cfg)
    return server


def _add_note_resources(server: FastMCP, cfg) -> None:
    """Each note as a readable resource, listed once at start-up (read from the folders, not the index)."""
    count = 0
    for name, root in store_roots(cfg):
        if not root.is_dir():
            continue
        for uri, path in NoteFilter(root, cfg.follow_symlinks).walk():
            if count >= MAX_NOTE_RESOURCES:
                return
            server.add_resource(FileResource(uri=f"mdmem://{name}/{uri}", name=f"{name}:{uri}",
                                             path=path.resolve(), mime_type="text/markdown"))
            count += 1


def serve(mem, cfg) -> None:
    build_server(mem, cfg).run("stdio")
