"""The memory as an MCP server: eleven tools with annotations and plain errors, and every note as a live resource."""

from __future__ import annotations

import asyncio
import logging
from importlib import metadata
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.types import CallToolResult, Resource, ResourceTemplate, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from indexer import validation
from indexer.config import MODES, SCOPES
from indexer.errors import MdmemError
from indexer.index.stores import store_roots
from indexer.mcp.shape import compact, invalid_arguments, plain
from indexer.notes.scanner import NoteFilter
from indexer.notes.names import MEMORY_TYPES
from indexer.notes.spaces import space_of

MAX_NOTE_RESOURCES = 2000  # beyond this, listing resources costs clients more than it helps
SCHEME = "mdmem://"
log = logging.getLogger("mdmem.mcp")

INSTRUCTIONS = (
    "Long-term memory kept as the user's Markdown notes. At the start of a task call memory_recall with the "
    "task for a prompt-ready block of what is known. Use memory_search to look something up (compact=true "
    "lists ids and first lines), memory_get to read one memory or note lines in full, memory_recent for what "
    "was added lately. Call memory_add for a lasting preference, fact, decision or event worth keeping (one "
    "memory per call, never secrets); a near-duplicate reinforces the existing memory instead. When a memory "
    "is wrong, memory_update it by id (pass the hash from memory_get to be safe); when a fact changed (a move, "
    "a new number), memory_add the new value with supersedes=<old id> so the old one stays visible as history "
    "(memory_history); memory_forget "
    "removes one by id, or lists the memories holding a query's words and removes them only with confirm=true; "
    "memory_restore puts a removed one back. Use space to keep "
    "one user's or character's memories apart, scope to pick the global or project store.")

Scope = Literal[SCOPES]
Store = Literal[tuple(s for s in SCOPES if s != "all")]
Mode = Literal[MODES]
Kind = Literal[MEMORY_TYPES]
Space = Annotated[str | None, Field(description="Memory space (one user or character), e.g. alice; "
                                                "omitted: the notes outside any space")]
Spaces = Annotated[list[str] | None, Field(description='More spaces in one ranking with space, e.g. ["alice", "bob"]; '
                                                      '"" = the notes outside every space')]
Limit = Annotated[int, Field(ge=1, le=100, description="Most results returned")]
Compact = Annotated[bool, Field(description="Only ids, places and first lines")]
MemoryId = Annotated[str, Field(description="A memory id as search, recent or add return it (16 hex characters)")]
Since = Annotated[str | None, Field(description="Only memories dated on or after this day: 2026-03-01, or an age such "
                                                "as 7d, 2w, 3m")]
Until = Annotated[str | None, Field(description="Only memories dated on or before this day: 2026-03-31, or an age")]
Now = Annotated[str | None, Field(description="The day time words in the query count from (上周, last week), "
                                             "e.g. 2026-11-25; omitted: today")]
Hash = Annotated[str | None, Field(description="The hash memory_get returned; refuses if the memory changed since")]

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def version() -> str:
    try:
        return metadata.version("mdmem")
    except metadata.PackageNotFoundError:
        return "0"


class _Server(MCPServer):
    """MCPServer whose refusals are one plain sentence and whose resources are the notes as they are now."""

    def __init__(self, lend, cfg, **kwargs):
        super().__init__(**kwargs)
        self.lend, self.cfg = lend, cfg

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            log.error("tool %s failed: %r", name, exc.__cause__)
            return error(f"{name} failed inside mdmem ({type(exc.__cause__).__name__}); the server log has details")
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return error(invalid_arguments(name, exc.__cause__.errors()))
            tools = [t.name for t in await self.list_tools()]
            if name not in tools:
                return error(plain(f"no tool {name}; the tools are {', '.join(tools)}"))
            return error(plain(str(exc)))

    async def list_resources(self) -> list[Resource]:
        return await asyncio.to_thread(self._notes)  # a walk of the folders must not hold up other requests

    def _notes(self) -> list[Resource]:
        """The notes as the folders hold them now (read from disk, not the index)."""
        out = []
        for name, root in store_roots(self.cfg):
            if not root.is_dir():
                continue
            for uri, _path in NoteFilter(root, self.cfg.follow_symlinks).walk():
                if len(out) >= MAX_NOTE_RESOURCES:
                    return out
                out.append(Resource(uri=f"{SCHEME}{name}/{uri}", name=f"{name}:{uri}", mime_type="text/markdown"))
        return out

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return [ResourceTemplate(uri_template=SCHEME + "{store}/{+path}", name="note",
                                 description="A note of the global or project store, e.g. mdmem://global/user/preference.md",
                                 mime_type="text/markdown")]

    async def read_resource(self, uri, context=None):
        text = str(uri)
        if not text.startswith(SCHEME):
            return await super().read_resource(uri, context)
        try:
            note = await asyncio.to_thread(self._read, text)
        except MdmemError as exc:
            raise ResourceError(plain(str(exc))) from None
        return [ReadResourceContents(content=note["text"], mime_type="text/markdown")]


    def _read(self, uri: str) -> dict:
        with self.lend() as mem:
            return mem.get(uri, space=space_of(uri[len(SCHEME):].partition("/")[2]))


def error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def build_server(lend, cfg, name: str = "mdmem") -> MCPServer:
    """An MCP server whose every call runs on the backend `lend()` gives for it (`with lend() as mem:`): the
    daemon lends a Memory per call; one backend in this process is lent one call at a time
    (`memory.one_at_a_time`)."""
    server = _Server(lend, cfg, name=name, title="mdmem long-term memory", instructions=INSTRUCTIONS,
                     version=version(), log_level="WARNING")

    def run(call, shape=lambda r: r):
        try:
            with lend() as mem:
                return shape(call(mem))
        except MdmemError as exc:
            return error(plain(str(exc)))

    def results(items: list[dict], compact_: bool, scope: str) -> dict:
        out = {"count": len(items), "results": [compact(i) if compact_ else i for i in items],
               **({"degraded": True} if any(i.get("degraded") for i in items) else {})}
        if not items:  # nothing found: say where, so a client started on another store than meant can tell
            out["searched"] = {name: str(root) for name, root in store_roots(cfg, scope)}
        return out

    @server.tool(title="Search memory", annotations=READ)
    def memory_search(query: Annotated[str, Field(description="What to look for, in any language")],
                      limit: Limit = 5, scope: Scope = "all", mode: Mode | None = None, space: Space = None,
                      compact: Compact = False, since: Since = None, until: Until = None, now: Now = None,
                      spaces: Spaces = None) -> dict:
        """Keyword and meaning search over the memories; best first, each with id, uri, lines, content, score and date."""
        cut = validation.truncation(query, cfg.max_query_chars)  # the search cuts it; the answer says so
        return run(lambda mem: [h.to_dict() if hasattr(h, "to_dict") else h
                            for h in mem.search(query, mode=mode, scope=scope, limit=limit, space=space, since=since,
                                                until=until, now=now, spaces=spaces)],
                   lambda hits: {**results(hits, compact, scope), **({"query_truncated": cut} if cut else {})})

    @server.tool(title="Recall memory for a prompt", annotations=READ)
    def memory_recall(query: Annotated[str, Field(description="The task or question at hand")],
                      context: Annotated[str, Field(description="Recent conversation, used when the query alone is weak")] = "",
                      max_chars: Annotated[int, Field(ge=validation.MIN_RECALL_CHARS, le=20000,
                                                      description="Size budget of the block")] = cfg.recall_max_chars,
                      scope: Scope = "all", space: Space = None, since: Since = None, until: Until = None,
                      now: Now = None, spaces: Spaces = None,
                      max_tokens: Annotated[int | None, Field(ge=validation.MIN_RECALL_TOKENS, le=5000, description=
                                                              "Size budget in tokens, besides max_chars")] = None) -> str:
        """A prompt-ready block of the memories relevant to the query, within max_chars ('' when none)."""
        return run(lambda mem: _said_cut(mem.recall(query, context=context or None, max_chars=max_chars, scope=scope,
                                                   space=space, since=since, until=until, now=now, spaces=spaces,
                                                   max_tokens=max_tokens)))

    @server.tool(title="Remember", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                               idempotent_hint=False, open_world_hint=False))
    def memory_add(text: Annotated[str, Field(description="One memory, in a sentence or two")],
                   type: Annotated[Kind, Field(description="preference, fact, instruction and entity go to the global store; "
                                                           "decision and episodic to the project journal")] = "fact",
                   importance: Annotated[int | None, Field(ge=validation.IMPORTANCE[0], le=validation.IMPORTANCE[1],
                                                           description="1-5 for a new note")] = None,
                   scope: Store | None = None,
                   file: Annotated[str | None, Field(description="Note path inside the store, e.g. agent/notes.md")] = None,
                   redact: Annotated[bool, Field(description="Mask secrets instead of refusing the text")] = False,
                   space: Space = None,
                   supersedes: Annotated[str | None, Field(description="Id of the memory this one replaces: it is "
                                                                       "struck through in its note and kept")] = None,
                   ) -> dict:
        """Write one memory to its Markdown note and index it at once; returns its id. A near-duplicate reinforces the
        existing one; a new value for a stored fact strikes the old one through. Text holding a secret is refused."""
        return run(lambda mem: mem.add(text, type=type, importance=importance, scope=scope, file=file, redact=redact,
                                   space=space, supersedes=supersedes))

    @server.tool(title="A memory's versions", annotations=READ)
    def memory_history(id: MemoryId, space: Space = None) -> dict:
        """The versions of a memory, oldest first: the values it replaced (struck through in the note) and the
        one that replaced it, each with its date and every id that names it."""
        return run(lambda mem: mem.history(id, space=space))

    @server.tool(title="Read a memory", annotations=READ)
    def memory_get(ref: Annotated[str, Field(description="A memory id, or a note path with optional lines: "
                                                         "user/preference.md, user/preference.md:3-5")],
                   space: Space = None, scope: Scope = "all") -> dict:
        """One memory (or note lines) as the Markdown holds it now, with id, lines, date, hash and counters."""
        return run(lambda mem: mem.get(ref, space=space, scope=scope))

    @server.tool(title="Correct a memory", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                                       idempotent_hint=True, open_world_hint=False))
    def memory_update(id: MemoryId, text: Annotated[str, Field(description="The memory's new text")],
                      space: Space = None, expected_hash: Hash = None,
                      redact: Annotated[bool, Field(description="Mask secrets instead of refusing the text")] = False,
                      ) -> dict:
        """Replace one memory's text in its note; its date and counters stay, other lines are untouched.
        Returns the memory's new id."""
        return run(lambda mem: mem.update(id, text, space=space, expected_hash=expected_hash, redact=redact))

    @server.tool(title="Forget", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                             idempotent_hint=True, open_world_hint=False))
    def memory_forget(id: Annotated[str | None, Field(description="The memory to remove")] = None,
                      query: Annotated[str | None, Field(description="Instead of an id: the words the memories to "
                                                                     "forget hold (Chinese as written)")] = None,
                      confirm: Annotated[bool, Field(description="With query: remove what it finds "
                                                                 "(without: only list it)")] = False,
                      space: Space = None, expected_hash: Hash = None,
                      purge: Annotated[bool, Field(description="Remove everywhere at once, with no copy kept "
                                                               "for memory_restore")] = False) -> dict:
        """Remove one memory by id from its note, or list (confirm=false) and remove (confirm=true) the memories
        whose text holds the query's words; those only similar in meaning are listed apart and never removed.
        A removed memory stays restorable (memory_restore) unless purge=true."""
        if bool(id) == bool(query):
            return error("Give either id or query.")
        if id:
            return run(lambda mem: mem.forget(id, space=space, expected_hash=expected_hash, purge=purge))
        return run(lambda mem: mem.forget_matching(query, space=space, yes=confirm, purge=purge))

    @server.tool(title="Restore a forgotten memory", annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False))
    def memory_restore(id: Annotated[str | None, Field(description="The id memory_forget (or memory_update, for "
                                                                   "the old text) answered; omitted: list the trash")] = None,
                       space: Space = None) -> dict:
        """Put a forgotten or corrected memory back where it was in its note; without id, list what can be restored."""
        if not id:
            return run(lambda mem: mem.trash(space=space))
        return run(lambda mem: mem.restore(id, space=space))

    @server.tool(title="Recent memories", annotations=READ)
    def memory_recent(limit: Limit = 10, scope: Scope = "all", space: Space = None, compact: Compact = False,
                      since: Since = None, until: Until = None, now: Now = None) -> dict:
        """The newest memories, newest first; since and until list the memories of those days."""
        return run(lambda mem: mem.recent(limit=limit, scope=scope, space=space, since=since, until=until, now=now),
                   lambda items: results(items, compact, scope))

    @server.tool(title="Review memory decisions", annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False))
    def memory_review(action: Annotated[Literal["list", "accept", "reject", "edit", "undo"],
                                        Field(description="list what waits; accept keeps a decision, reject and "
                                                          "undo put things back as before it, edit rewrites the "
                                                          "memory (or a proposed summary) to text")] = "list",
                      id: Annotated[str | None, Field(description="The decision id the list gives")] = None,
                      text: Annotated[str | None, Field(description="With edit: the new text")] = None,
                      all: Annotated[bool, Field(description="With list: the whole decision log")] = False,
                      space: Space = None) -> dict:
        """The decisions memory_add made on its own (a restatement reinforced, an old value struck through, a
        near memory kept apart) and proposed summaries: list what waits for review, or resolve one by id."""
        if action != "list" and not id:
            return error("Give the id of the decision (action list shows them).")
        return run(lambda mem: mem.review(action, id=id, text=text, space=space, all=all))

    @server.tool(title="Memory status", annotations=READ)
    def memory_status(scope: Scope = "all") -> dict:
        """Per store: where it lives, files, memories and vectors, and whether the index lags the notes."""
        return run(lambda mem: mem.status(scope))

    return server


def serve_stdio(lend, cfg, verbose: bool = False) -> None:
    """Serve over stdin/stdout; stderr carries only real problems unless verbose."""
    server = build_server(lend, cfg)
    logging.getLogger().setLevel(logging.INFO if verbose else logging.WARNING)
    log.setLevel(logging.INFO if verbose else logging.ERROR)
    server.run("stdio")


def _said_cut(res: dict) -> str:
    """The block, after one line saying the question was cut when it was over max_query_chars: the tool answers
    text only, and an agent should know its question was not read whole."""
    cut = res.get("query_truncated")
    if not cut:
        return res["text"]
    note = (f"(mdmem: the question has {cut['chars']:,} characters; only its last {cut['kept']:,} were read, "
            "max_query_chars)")
    return f"{note}\n{res['text']}" if res["text"] else note
