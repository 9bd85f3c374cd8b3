"""Hostile notes, names and queries: no crash, no traceback, a one-line message where the user must act."""

import os
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_process import command
from indexer import config
from indexer.notes import scanner
from indexer.memory import Memory
from indexer.notes.chunker import parse_note
from indexer.errors import InputError, NoteError
from indexer.notes.scanner import decode_note

HEALTH = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _memory(home: Path, embedder, **settings) -> Memory:
    return Memory(cfg=config.load(home=home, env={}, **settings), embedder=embedder)


def _index(home: Path, embedder, files: dict[str, bytes], **settings):
    home.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    mem = _memory(home, embedder, **settings)
    reports = mem.index()
    return mem, reports[0]


def _assert_clean(mem: Memory) -> None:
    reports = mem.verify()
    assert all(r.ok for r in reports), [d for r in reports for d in r.differences]


def _uris(mem: Memory) -> set[str]:
    from indexer.index import sql
    return sql.chunk_uris(mem.stores()[0].con)


# ---- notes: encodings and odd bytes ------------------------------------------------------------

ODD_NOTES = {
    "binary.md": (bytes(range(256)) * 40, "NUL bytes"),
    "latin1.md": ("café crème brûlée notes".encode("latin-1"), "not UTF-8"),
    "gbk.md": ("数据库迁移事故的根本原因".encode("gbk"), "not UTF-8"),
    "empty.md": (b"", None),
    "blank.md": (b"\n\n   \n\t\n", None),
    "fm-only.md": (b"---\ntype: preference\nimportance: 5\n---\n", None),
    "fm-broken.md": (b"---\ntype: [unclosed\nimportance: : :\n---\nBody text survives the broken front matter.\n", None),
    "fm-unclosed.md": (b"---\ntype: note\nno closing fence ever, so this is all body text\n", None),
    "fm-bad-values.md": (b"---\nimportance: lots\ntags: 7\nevergreen: maybe\n---\nbody words here for the test\n", None),
    "bom8.md": ("\ufeff# BOM note\n\nutf8 bom body text line\n".encode("utf-8"), None),
    "utf16le.md": ("# UTF-16 note\n\nlittle endian body with 中文 text\n".encode("utf-16"), None),
    "utf16be.md": (b"\xfe\xff" + "# UTF-16 BE\n\nbig endian body text here\n".encode("utf-16-be"), None),
    "utf16-odd.md": (b"\xff\xfe\x00", "NUL bytes"),
    "crlf.md": (b"# CRLF note\r\n\r\nwindows line endings here\r\nsecond line\r\n", None),
    "lonecr.md": (b"# Old mac\r\rclassic mac line endings here\rmore\r", None),
    "mixed-eol.md": (b"# Mixed\r\n\nunix\rmac\r\nwindows line ending soup\n", None),
    "controls.md": ("# Ctl\n\nbell \x07 escape \x1b[31m red \u202e rtl \u2028 sep\n".encode("utf-8"), None),
    "surrogate-escape.md": (b"valid start \xed\xa0\x80 lone surrogate encoded", "not UTF-8"),
}


@pytest.mark.parametrize("name", sorted(ODD_NOTES))
def test_odd_note_is_indexed_or_skipped_with_a_message(tmp_path, none_embedder, name):
    data, message = ODD_NOTES[name]
    mem, rep = _index(tmp_path / "home", none_embedder, {name: data, "ok.md": b"# Fine\n\nan ordinary note body\n"})
    with mem:
        if message:
            assert len(rep.skipped) == 1 and message in rep.skipped[0] and name in rep.skipped[0]
            assert "\n" not in rep.skipped[0] and name not in _uris(mem)
        assert "ok.md" in _uris(mem)
        _assert_clean(mem)
        mem.search("note body", mode="fts")


def test_crlf_and_utf16_notes_give_right_lines(tmp_path, none_embedder):
    files = {k: ODD_NOTES[k][0] for k in ("crlf.md", "utf16le.md", "lonecr.md")}
    mem, _ = _index(tmp_path / "home", none_embedder, files)
    with mem:
        hit = mem.search("windows line endings", mode="fts")[0]
        assert (hit.uri, hit.start_line, hit.end_line) == ("crlf.md", 1, 4)
        assert mem.search("endian", mode="fts")[0].uri == "utf16le.md"
        assert mem.search("classic mac", mode="fts")[0].start_line == 1


# ---- notes: sizes and shapes -----------------------------------------------------------------

def test_50_mb_note_is_skipped_with_the_limit_and_the_fix(tmp_path, none_embedder):
    home = tmp_path / "home"
    home.mkdir()
    with open(home / "huge.md", "wb") as f:
        f.truncate(50 * 1024 * 1024)  # sparse: the size check comes before any read
    mem, rep = _index(home, none_embedder, {"ok.md": b"# ok\n\nsmall note body text\n"})
    with mem:
        assert len(rep.skipped) == 1 and "huge.md" in rep.skipped[0] and ".mdmemignore" in rep.skipped[0]
        _assert_clean(mem)


@pytest.mark.parametrize("name,text", [
    ("one-mb-line", "word " * 200_000),
    ("one-mb-cjk-line", "数据库迁移事故的根本原因。" * 20_000),
    ("one-mb-no-space", "x" * 1_000_000),
    ("ten-k-headings", "".join(f"# heading {i}\n\ntext {i}\n\n" for i in range(10_000))),
    ("nested-lists", "".join("  " * i + f"- item {i}\n" for i in range(1000))),
    ("nested-quotes", ">" * 3000 + " deep quote\n"),
    ("nested-quote-lines", "".join(">" * i + " q\n" for i in range(1, 300))),
    ("huge-table", "| a | b |\n|---|---|\n" + "".join(f"| {i} | cell {i} |\n" for i in range(5000))),
    ("unclosed-fence", "```\n" + "code line\n" * 5000),
    ("html-soup", "<div>" * 2000 + "text" + "</div>" * 10),
])
def test_pathological_markdown_chunks_within_limits(tmp_path, none_embedder, name, text):
    note = parse_note(text, f"{name}.md")
    lines = text.split("\n")
    assert note.chunks
    for c in note.chunks:
        assert c.token_count <= 400 or c.end_line == c.start_line  # only a line too long to cut stands alone
        assert c.content.strip() in "\n".join(lines[c.start_line - 1:c.end_line])
    mem, rep = _index(tmp_path / "home", none_embedder, {f"{name}.md": text.encode()})
    with mem:
        assert not rep.skipped
        _assert_clean(mem)


def _alias_bomb(levels: int) -> str:
    """YAML whose aliases stand for 9**levels strings: tiny to parse, huge if anything expands it."""
    out, prev = 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n', "l0"
    for i in range(1, levels):
        out += f"l{i}: &l{i} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
        prev = f"l{i}"
    return out + f"tags: [*{prev}, keep, *{prev}]\ntype: *{prev}\n"


FRONT_MATTER = {  # name: (front matter text, expected problem or None, expected tags)
    "alias-bomb": (_alias_bomb(10), None, ("keep",)),
    "deep-lists": ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply", ()),
    "deep-maps": ("a: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "nested too deeply", ()),
    "odd-tags": ("tags: [ok, [nested], {a: 1}, 7, true, " + "x" * 500 + "]\ntype: [list]\n", None,
                 ("ok", "7", "x" * 64)),
    "python-tag": ("tags: !!python/object/apply:os.system [\"false\"]\n", "not valid YAML", ()),
    "too-long": ("".join(f"k{i}: {i}\n" for i in range(1000)), "not closed within 400 lines", ()),
}


@pytest.mark.parametrize("name", sorted(FRONT_MATTER))
def test_hostile_front_matter_is_read_safely_or_ignored_with_a_message(tmp_path, none_embedder, name):
    fm, problem, tags = FRONT_MATTER[name]
    text = f"---\n{fm}---\n# Body\n\nthe body of {name} survives\n"
    note = parse_note(text, f"{name}.md")
    assert note.tags == tags
    if problem:
        assert len(note.warnings) == 1 and problem in note.warnings[0] and "\n" not in note.warnings[0]
    else:
        assert not note.warnings and note.type == "note"  # a list is no type: the default stays
    mem, rep = _index(tmp_path / "home", none_embedder, {f"{name}.md": text.encode()})
    with mem:
        assert mem.search("survives", mode="fts")[0].uri == f"{name}.md"
        _assert_clean(mem)


def test_note_the_chunker_cannot_handle_skips_only_itself(tmp_path, none_embedder, monkeypatch):
    from indexer.notes import chunker
    real = chunker._parse_note

    def fragile(text, uri, *a):
        if uri == "bad.md":
            raise RecursionError("maximum recursion depth exceeded")
        return real(text, uri, *a)

    monkeypatch.setattr(chunker, "_parse_note", fragile)
    files = {"bad.md": b"# Bad\n\nthis one breaks the chunker\n", "ok.md": b"# ok\n\nordinary body text\n"}
    mem, rep = _index(tmp_path / "home", none_embedder, files)
    with mem:
        assert len(rep.skipped) == 1 and "bad.md" in rep.skipped[0] and "could not be chunked" in rep.skipped[0]
        assert "\n" not in rep.skipped[0] and _uris(mem) == {"ok.md"}
        _assert_clean(mem)  # verify skips it the same way: the note is not a difference


# ---- names and links -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["with space.md", "中文 笔记.md", "new\nline.md", "tab\there.md", "émoji 🎉.md",
                                  "sub dir/deep é/n.md", "quote'\"s.md", "semi;colon --.md", "percent%_under.md"])
def test_odd_names_are_indexed_and_found(tmp_path, none_embedder, name):
    mem, rep = _index(tmp_path / "home", none_embedder, {name: b"# Title\n\nzebrafish protocol notes\n"})
    with mem:
        assert not rep.skipped and _uris(mem) == {name}
        assert mem.search("zebrafish", mode="fts")[0].uri == name
        assert mem.search("zebrafish", mode="fts", under=[name[:3]])[0].uri == name
        _assert_clean(mem)


def test_name_that_is_not_utf8_is_skipped_with_a_message(tmp_path, none_embedder):
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    for raw in (b"/bad-\xff-name.md", b"/sub/caf\xe9.md"):
        with open(os.fsencode(home) + raw, "wb") as f:
            f.write(b"# x\n\nbody text of the note\n")
    mem, rep = _index(home, none_embedder, {"ok.md": b"# ok\n\nan ordinary body\n"})
    with mem:
        assert _uris(mem) == {"ok.md"}
        assert len(rep.skipped) == 2 and all("not valid UTF-8; rename" in m for m in rep.skipped), rep.skipped
        assert all("\n" not in m for m in rep.skipped)  # one line each
        _assert_clean(mem)


def test_symlinks_loops_and_links_out_of_the_root(tmp_path, none_embedder):
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nprivate outside words\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "inside.md").write_text("# Inside\n\ninside words for the link\n")
    (home / "out-link.md").symlink_to(outside)
    (home / "in-link.md").symlink_to(home / "inside.md")
    (home / "loop-a.md").symlink_to(home / "loop-b.md")
    (home / "loop-b.md").symlink_to(home / "loop-a.md")
    (home / "dangling.md").symlink_to(home / "nowhere.md")
    (home / "dirloop").symlink_to(home, target_is_directory=True)
    (home / "outdir").symlink_to(tmp_path, target_is_directory=True)
    mem, rep = _index(home, none_embedder, {})
    with mem:
        assert _uris(mem) == {"inside.md", "in-link.md"}
        assert not mem.search("private outside", mode="fts")
        _assert_clean(mem)
    mem, rep = _index(home, none_embedder, {}, follow_symlinks=True)
    with mem:
        assert "out-link.md" in _uris(mem)
        _assert_clean(mem)


def test_fifo_and_folder_named_md_are_not_read(tmp_path, none_embedder):
    home = tmp_path / "home"
    (home / "folder.md").mkdir(parents=True)
    os.mkfifo(home / "pipe.md")  # opening it would block forever
    mem, rep = _index(home, none_embedder, {"ok.md": b"# ok\n\nordinary body text\n"})
    with mem:
        assert _uris(mem) == {"ok.md"}
        _assert_clean(mem)


def test_name_swapped_for_a_fifo_or_a_device_after_the_walk_is_not_read(tmp_path, none_embedder, monkeypatch):
    home = tmp_path / "home"
    mem, _ = _index(home, none_embedder, {"pipe.md": b"# p\n\nplain at first\n", "dev.md": b"# d\n\nplain too\n",
                                          "ok.md": b"# ok\n\nordinary body text\n"})
    mem.close()
    (home / "pipe.md").unlink()
    os.mkfifo(home / "pipe.md")  # open() without O_NONBLOCK would wait here for a writer forever
    (home / "dev.md").unlink()
    (home / "dev.md").symlink_to("/dev/zero")
    from indexer.sync import store_sync as sync
    with _memory(home, none_embedder) as mem:
        st = mem.stores()[0]
        rep = sync.index_paths(st, [home / "pipe.md"], none_embedder, mem.cfg)
        monkeypatch.setattr(Path, "is_file", lambda self: True)  # the walk saw a plain file just before
        monkeypatch.setattr(st.filter, "admits", lambda path: True)
        rep2 = sync.index_paths(st, [home / "pipe.md", home / "dev.md"], none_embedder, mem.cfg)
        monkeypatch.undo()
        assert rep.indexed == rep2.indexed == 0
        assert sorted(s.split(":")[0] for s in rep2.skipped) == ["dev.md", "pipe.md"]
        assert all("not a regular file" in s for s in rep2.skipped)


def test_unreadable_note_is_skipped_with_the_fix(tmp_path, none_embedder, monkeypatch):
    real_open = os.open

    def deny(path, *a, **k):
        if str(path).endswith("locked.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", deny)  # root ignores chmod 000
    mem, rep = _index(tmp_path / "home", none_embedder, {"locked.md": b"# l\n\nlocked body\n", "ok.md": b"# ok\n\nbody\n"})
    with mem:
        assert len(rep.skipped) == 1 and "chmod u+r" in rep.skipped[0]
        _assert_clean(mem)


def test_note_deleted_or_truncated_while_being_read(tmp_path, none_embedder, monkeypatch):
    home = tmp_path / "home"
    mem, _ = _index(home, none_embedder, {f"n{i}.md": f"# n{i}\n\nbody number {i} " .encode() * 40 for i in range(6)})
    mem.close()
    real_read = scanner.read_note

    def racing(path, uri):
        if uri == "n1.md":
            path.unlink()  # gone between the walk and the read
        if uri == "n2.md":
            path.write_bytes(b"# n2\n\nshort now\n")  # truncated between the stat and the read
        return real_read(path, uri)

    for i in range(6):
        (home / f"n{i}.md").write_text(f"# n{i}\n\nchanged body {i}\n" * 3)
    monkeypatch.setattr("indexer.sync.store_sync.read_note", racing)
    with _memory(home, none_embedder) as mem:
        rep = mem.index()[0]
        assert any("n1.md" in s for s in rep.skipped)
    monkeypatch.undo()
    with _memory(home, none_embedder) as mem:
        mem.index()
        _assert_clean(mem)
        assert "n1.md" not in _uris(mem)


def test_ten_thousand_notes_created_at_once(tmp_path, none_embedder):
    home = tmp_path / "home"
    for i in range(10_000):
        d = home / f"d{i % 50}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"n{i}.md").write_text(f"# n{i}\n\nmemo {i} body\n")
    with _memory(home, none_embedder) as mem:
        rep = mem.index()[0]
        assert rep.indexed == 10_000 and not rep.skipped
        assert mem.search("memo", mode="fts", limit=3)
        assert mem.verify()[0].ok


def test_root_deleted_between_runs_is_recreated(tmp_path, none_embedder):
    import shutil
    home = tmp_path / "home"
    mem, _ = _index(home, none_embedder, {"a.md": b"# a\n\nbody text here\n"})
    mem.close()
    shutil.rmtree(home)
    with _memory(home, none_embedder) as mem:
        mem.index()
        _assert_clean(mem)


# ---- properties ---------------------------------------------------------------------------

@settings(max_examples=300, **HEALTH)
@given(st.text(alphabet=st.sampled_from(list("#>-*`|: \n\r\t.。abc中文1[]()!_~\ufeff"))
               | st.characters(blacklist_categories=("Cs",)), max_size=800))  # decoded notes hold no surrogates
def test_any_text_chunks_into_exact_line_ranges(text):
    note = parse_note(text, "p.md", 40, 60)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    for c in note.chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.content.strip() and c.content in "\n".join(lines[c.start_line - 1:c.end_line])


@settings(max_examples=300, **HEALTH)
@given(st.binary(max_size=600))
def test_any_bytes_decode_and_chunk_or_fail_with_a_note_error(data):
    try:
        text = decode_note(data, "b.md")
    except NoteError as exc:
        assert "b.md" in str(exc) and "\n" not in str(exc)
        return
    parse_note(text, "b.md")


HOSTILE_QUERIES = ['"unbalanced', "a AND OR NOT", "NEAR(a b, 3)", "*", "^start", "content:secret", "(((", "-foo",
                   "'; DROP TABLE chunks; --", "%", "_", "\\", "x" * 100_000, "数据库" * 30_000, "a\x00b",
                   "\x00", "🎉", "\u202e", "rowid=1 OR 1=1", "chunks_fts MATCH 'x'", "{}[]<>", "\ud800"]


@pytest.fixture(scope="module")
def small_memory(tmp_path_factory, usem3):
    home = tmp_path_factory.mktemp("q") / "home"
    home.mkdir()
    (home / "a.md").write_text("# Backup\n\nNightly database backup at 2am. 数据库每天备份。\n")
    mem = _memory(home, usem3)
    mem.index()
    yield mem
    mem.close()


@pytest.mark.parametrize("i", range(len(HOSTILE_QUERIES)))
@pytest.mark.parametrize("mode", ["hybrid", "fts"])
def test_hostile_queries_never_raise(small_memory, i, mode):
    small_memory.search(HOSTILE_QUERIES[i], mode=mode, under=["%", "_x"])


@pytest.mark.parametrize("q", ["", "   ", "\n\t"])
def test_empty_queries_give_an_input_error(small_memory, q):
    with pytest.raises(InputError, match="query is empty"):
        small_memory.search(q)


@settings(max_examples=150, **HEALTH)
@given(q=st.text(min_size=1, max_size=200))
def test_random_queries_never_raise(small_memory, q):
    if q.strip():
        small_memory.search(q, mode="fts")


def test_cli_over_a_hostile_tree_prints_no_traceback(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    for name, (data, _msg) in ODD_NOTES.items():
        (home / name).write_bytes(data)
    (home / "out.md").symlink_to(tmp_path)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = command("--home", str(home), "--embedder", "none")
    for args in (["index"], ["verify"], ["search", '"; DROP TABLE x; NEAR(', "--json"], ["search", ""],
                 ["search", "a\x01b"], ["verify", "--json"], ["verify", "--repair"]):
        r = subprocess.run(base + args, capture_output=True, text=True, env=env, timeout=120)
        assert "Traceback" not in r.stderr + r.stdout, (args, r.stderr)
        assert r.returncode in (0, 2), (args, r.returncode, r.stderr)
        if args[0] == "index":
            for name, (_d, message) in ODD_NOTES.items():
                assert (f"warning: {name}: " in r.stderr) == bool(message) or name.startswith("fm-"), name


# ---- long questions through the daemon: cut and said so, and never in the way of a short one -----------------

LONG_ZH = ("数据库备份的计划" * 12_500)  # 100,000 characters
LONG_EN = ("the database backup plan " * 4_000)  # 100,000 characters


def _in_flight_then_short(send_long, read_long, short, gate):
    """Send the long question; once the model server holds it, ask the short one, then open the gate and read
    the long answer. Returns (order of the answers, long answer, short answer)."""
    order, out = [], {}

    def long_side():
        send_long()
        out["long"] = read_long()
        order.append("long")

    t = threading.Thread(target=long_side)
    t.start()
    assert gate.holding.wait(120)
    out["short"] = short()
    order.append("short")
    gate.opened.set()
    t.join(300)
    return order, out["long"], out["short"]


def _gated_embedder(home, server):
    """Embed through `server`, whose gate holds the long question's text until the short question is answered:
    a caller that served one question at a time could never answer it, and the long question would end in
    search_timeout_s's "busy" instead, so the order of the answers proves concurrency at any machine's speed."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[embedder]\nprovider = "ollama"\nmodel = "usem3-test"\n'
                                      f'base_url = "{server.url}"\ndimensions = 512\n', encoding="utf-8")


def test_long_questions_through_the_socket_are_cut_said_and_hold_back_no_one(tmp_path, usem3):
    import json
    import socket
    from daemon_harness import Served
    from indexer.remote import Client
    from model_servers import ModelServer
    d = Served(tmp_path)
    (d.home / "user" / "db.md").write_text("# DB\n\n- 2026-01-05: 数据库每天凌晨两点备份。\n- 2026-01-06: coffee at ten.\n")
    with ModelServer(usem3) as server:
        _gated_embedder(d.home, server)
        d.start()
        try:
            gate = server.gate(LONG_ZH[:40])
            raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            raw.settimeout(300)
            raw.connect(str(d.socket()))
            lines = raw.makefile("rb")
            short = Client(d.socket(), timeout=300)
            request = {"method": "search", "params": {"query": LONG_ZH, "limit": 3}}
            order, long, near = _in_flight_then_short(
                lambda: raw.sendall((json.dumps(request, ensure_ascii=False) + "\n").encode()),
                lambda: json.loads(lines.readline()), lambda: short.call("search", {"query": "coffee", "limit": 3}),
                gate)
            assert server.gate_held == [True] and order == ["short", "long"] and "coffee" in near[0]["content"]
            assert long["result"] and "数据库" in long["result"][0]["content"]
            recall = short.call("recall", {"query": LONG_EN + " when is the 数据库 backup?"})
            assert recall["query_truncated"] == {"chars": len(LONG_EN + " when is the 数据库 backup?"), "kept": 2000}
            assert recall["query"].endswith("when is the 数据库 backup?")
            assert short.call("search", {"query": "coffee"})  # nothing broke
        finally:
            assert d.stop() == 0, d.log.read_text()[-2000:]


def _mcp_session(srv) -> dict:
    """Headers of an initialised MCP session over streamable HTTP, spoken by hand (so a call is known sent)."""
    status, headers, _ = _mcp_post(srv, {}, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert status == 200
    session = {"mcp-session-id": headers["mcp-session-id"]}
    assert _mcp_post(srv, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202
    return session


def _mcp_post(srv, session: dict, message: dict):
    import http.client
    import json
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
    conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers={
        "Authorization": f"Bearer {srv.token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", **session})
    return _mcp_read(conn)


def _mcp_read(conn):
    import json
    resp = conn.getresponse()
    body = resp.read().decode()
    data = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data[-1] if data else None


def _tool(name: str, arguments: dict, id_: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def test_long_questions_over_http_and_mcp_are_cut_said_and_hold_back_no_one(tmp_path, usem3):
    from http_daemon import serving
    from model_servers import ModelServer
    with ModelServer(usem3) as server:
        _gated_embedder(tmp_path / "home", server)
        with serving(tmp_path) as srv:
            _http_and_mcp_questions(srv, server)


def _http_and_mcp_questions(srv, server):
    """Over mem0's REST search, then MCP's: each time a long question in flight, a short one answered first."""
    import http.client
    import json
    for text in ("数据库每天凌晨两点备份。", "I drink coffee at ten."):
        assert srv.call("POST", "/memories", {"messages": [{"role": "user", "content": text}],
                                              "user_id": "alice", "infer": False})[0] == 200
    gate = server.gate(LONG_ZH[:40])
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
    body = {"query": LONG_ZH, "user_id": "alice"}
    order, long, near = _in_flight_then_short(
        lambda: conn.request("POST", "/search", body=json.dumps(body).encode(), headers={
            "Authorization": f"Bearer {srv.token}", "Content-Type": "application/json"}),
        lambda: (lambda r: (r.status, json.loads(r.read())))(conn.getresponse()),
        lambda: srv.call("POST", "/search", {"query": "coffee", "user_id": "alice"}), gate)
    assert server.gate_held == [True] and order == ["short", "long"]
    assert "coffee" in near[1]["results"][0]["memory"]
    assert long[0] == 200 and long[1]["query_truncated"] == {"chars": 100_000, "kept": 2000}
    assert "数据库" in long[1]["results"][0]["memory"]

    session = _mcp_session(srv)
    gate = server.gate(LONG_EN[:40])
    mcp = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
    order, long, near = _in_flight_then_short(
        lambda: mcp.request("POST", "/mcp", body=json.dumps(_tool("memory_search", {
            "query": LONG_EN, "space": "alice"})).encode(), headers={
            "Authorization": f"Bearer {srv.token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", **session}),
        lambda: _mcp_read(mcp),
        lambda: _mcp_post(srv, session, _tool("memory_search", {"query": "coffee", "space": "alice"}, 2)), gate)
    assert server.gate_held == [True, True] and order == ["short", "long"]
    found = json.loads(near[2]["result"]["content"][0]["text"])
    assert "coffee" in found["results"][0]["content"]
    answer = json.loads(long[2]["result"]["content"][0]["text"])
    assert answer["query_truncated"] == {"chars": len(LONG_EN.strip()), "kept": 2000} and answer["results"]


def test_long_questions_over_mcp_stdio_through_the_daemon_hold_back_no_one(tmp_path, usem3):
    import asyncio
    import json
    from mcp import ClientSession
    from mcp_calls import stdio_params
    from mcp.client.stdio import stdio_client
    from daemon_harness import Served
    from model_servers import ModelServer
    d = Served(tmp_path)
    (d.home / "user" / "db.md").write_text("# DB\n\n- 2026-01-05: 数据库每天凌晨两点备份。\n- 2026-01-06: coffee at ten.\n")
    params = stdio_params(d.args, env=d.env)

    async def session():
        order = []
        async with stdio_client(params, errlog=open(tmp_path / "stderr.txt", "w")) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()

                async def ask(name, query):
                    out = await s.call_tool("memory_search", {"query": query})
                    order.append(name)
                    return json.loads(out.content[0].text)
                long = asyncio.create_task(ask("long", LONG_ZH))
                assert await asyncio.to_thread(gate.holding.wait, 120)  # the long one is in the daemon
                short = await ask("short", "coffee")
                gate.opened.set()
                return order, await long, short

    with ModelServer(usem3) as server:
        _gated_embedder(d.home, server)
        d.start()
        try:
            gate = server.gate(LONG_ZH[:40])
            order, long, short = asyncio.run(asyncio.wait_for(session(), 240))
        finally:
            assert d.stop() == 0, d.log.read_text()[-2000:]
    assert server.gate_held == [True] and order == ["short", "long"]
    assert "coffee" in short["results"][0]["content"]
    assert long["query_truncated"] == {"chars": 100_000, "kept": 2000} and "数据库" in long["results"][0]["content"]
