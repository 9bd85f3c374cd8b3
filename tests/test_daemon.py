"""`mdmem serve` as a real process over real files: editor save patterns, restarts, socket, locks."""

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from daemon_harness import Served, eventually, found_not, index_equals_notes, write
from ranking_pairs import PAIRS
from indexer.index import db
from indexer.index import sql


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = Served(tmp_path_factory.mktemp("served"))
    (d.notes / "seed.md").write_text("# Seed\n\nThe seed note mentions marmalade.\n")
    d.start()
    yield d
    assert d.stop() == 0, d.log.read_text()


def test_startup_indexed_and_socket_is_private(served):
    assert served.uris("marmalade") == {"seed.md"}
    mode = served.socket().stat().st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600


def test_plain_create_edit_delete(served):
    p = served.notes / "plain.md"
    write(p, "# Plain\n\nalbatross first words\n")
    assert eventually(lambda: served.uris("albatross") == {"plain.md"})
    write(p, "# Plain\n\ncormorant second words\n")
    assert eventually(lambda: found_not(served, "cormorant", "albatross"))
    p.unlink()
    assert eventually(lambda: not served.uris("cormorant"))


def test_vim_swap_probe_and_write_rename(served):
    d = served.notes / "vim"
    p = d / "v.md"
    write(p, "# Vim\n\nvimoldword here\n")
    assert eventually(lambda: served.uris("vimoldword") == {"vim/v.md"})
    swap = d / ".v.md.swp"
    write(swap, "swap bytes vimnewword")
    probe = d / "4913"
    write(probe, "")
    probe.unlink()
    os.rename(p, d / "v.md~")  # backup by rename, then the new file is written in place
    write(p, "# Vim\n\nvimnewword here\n")
    (d / "v.md~").unlink()
    swap.unlink()
    assert eventually(lambda: found_not(served, "vimnewword", "vimoldword", "vim/v.md"))
    assert served.uris("vimnewword") == {"vim/v.md"}


def test_emacs_lock_and_backup(served):
    p = served.notes / "emacs.md"
    write(p, "# Emacs\n\nemacsoldword\n")
    assert eventually(lambda: served.uris("emacsoldword") == {"emacs.md"})
    lock = served.notes / ".#emacs.md"
    os.symlink("user@host.1234:1700000000", lock)
    shutil.copy2(p, served.notes / "emacs.md~")
    write(p, "# Emacs\n\nemacsnewword\n")
    lock.unlink()
    assert eventually(lambda: found_not(served, "emacsnewword", "emacsoldword", "emacs.md"))


def test_vscode_and_jetbrains_temp_then_rename(served):
    p = served.notes / "ide.md"
    write(p, "# IDE\n\nideoldword\n")
    assert eventually(lambda: served.uris("ideoldword") == {"ide.md"})
    tmp = served.notes / "ide.md.tmp.1234"
    write(tmp, "# IDE\n\nvscodenewword\n")
    os.replace(tmp, p)
    assert eventually(lambda: found_not(served, "vscodenewword", "ideoldword", "ide.md"))
    jb_tmp, jb_old = served.notes / "ide.md___jb_tmp___", served.notes / "ide.md___jb_old___"
    write(jb_tmp, "# IDE\n\njetbrainsnewword\n")
    os.rename(p, jb_old)
    os.rename(jb_tmp, p)
    jb_old.unlink()
    assert eventually(lambda: found_not(served, "jetbrainsnewword", "vscodenewword", "ide.md"))


def test_sed_in_place(served):
    p = served.notes / "sed.md"
    write(p, "# Sed\n\nsedoldword stays\n")
    assert eventually(lambda: served.uris("sedoldword") == {"sed.md"})
    subprocess.run(["sed", "-i", "s/sedoldword/sednewword/", str(p)], check=True)
    assert eventually(lambda: found_not(served, "sednewword", "sedoldword", "sed.md"))


def test_mv_in_and_out_of_the_root(served, tmp_path):
    outside = tmp_path / "elsewhere.md"
    write(outside, "# Moved\n\nmovedinword\n")
    shutil.move(outside, served.notes / "moved.md")
    assert eventually(lambda: served.uris("movedinword") == {"moved.md"})
    shutil.move(served.notes / "moved.md", tmp_path / "gone.md")
    assert eventually(lambda: not served.uris("movedinword"))
    folder = tmp_path / "folder"
    write(folder / "deep" / "f.md", "# Folder\n\nfoldermovedword\n")
    shutil.move(folder, served.notes / "folder")
    assert eventually(lambda: served.uris("foldermovedword") == {"folder/deep/f.md"})
    os.rename(served.notes / "folder", served.notes / "renamed")
    assert eventually(lambda: served.uris("foldermovedword") == {"renamed/deep/f.md"})


def test_checkout_rewriting_500_files_then_deleting_the_folder(served):
    d = served.notes / "bulk"
    for i in range(500):
        write(d / f"n{i:03}.md", f"# Note {i}\n\nbulkold{i} checkout\n")
    assert eventually(lambda: len(served.uris("checkout")) == 50 and index_equals_notes(served.notes), 60)
    for i in range(500):  # like git: new content to a temp name, then rename over
        tmp = d / f".n{i:03}.md.lock"
        write(tmp, f"# Note {i}\n\nbulknew{i} switched\n")
        os.replace(tmp, d / f"n{i:03}.md")
    assert eventually(lambda: index_equals_notes(served.notes), 60)
    assert served.uris("bulknew499") == {"bulk/n499.md"} and not served.uris("bulkold499")
    shutil.rmtree(d)
    assert eventually(lambda: not served.uris("switched") and index_equals_notes(served.notes), 30)


def test_cli_search_status_decay_go_through_the_daemon(served):
    write(served.notes / "cli.md", "# CLI\n\nthe quetzal feather report\n")
    assert eventually(lambda: served.uris("quetzal") == {"cli.md"})
    r = served.cli("search", "quetzal feather", "--json", "--mode", "fts")
    assert r.returncode == 0, r.stderr
    assert [h["uri"] for h in json.loads(r.stdout)["results"]][:1] == ["cli.md"]
    r = served.cli("search", "--batch", "-", "--mode", "fts", input='{"qid": "q1", "query": "quetzal"}\n')
    assert json.loads(r.stdout)["results"][0]["uri"] == "cli.md"
    r = served.cli("status", "--json")
    data = json.loads(r.stdout)["stores"]
    assert data["project"]["daemon"] is True and data["project"]["files"] >= 2
    # the daemon's kept copies, read from the object it hands its stores: a small store's vectors, no words
    assert data["project"]["kept_vectors"] in ("matrix", "loading") and data["project"]["kept_words"] is None
    r = served.cli("decay")
    assert r.returncode == 0 and "project:" in r.stdout, r.stderr
    r = served.cli("cleanup")
    assert r.returncode == 0 and "WAL checkpointed" in r.stdout, r.stderr
    r = served.cli("rebuild", "--scope", "project")
    assert r.returncode == 0 and "project: rebuilt" in r.stdout, r.stderr
    assert served.uris("quetzal") == {"cli.md"}


def test_add_and_recall_go_through_the_daemon(served):
    r = served.cli("add", "Afternoon drink: always oolong tea, never coffee after 3pm", "--type", "preference", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["action"] == "appended" and res["store"] == "global"
    assert "oolong" in (served.home / res["uri"]).read_text(encoding="utf-8")
    r = served.cli("recall", "what do I drink in the afternoon")
    assert r.returncode == 0 and "oolong" in r.stdout and res["uri"] in r.stdout, r.stderr
    r = served.cli("add", "my key is AKIAIOSFODNN7EXAMPLE", "--type", "fact")
    assert r.returncode != 0 and "AKIAIOSFODNN7EXAMPLE" not in r.stderr


def test_sighup_reloads_the_configuration(served):
    (served.home / "config.toml").write_text("debounce_ms = 120\nreconcile_minutes = 5\nchunk_target_tokens = 60\n")
    try:
        served.proc.send_signal(signal.SIGHUP)
        assert eventually(lambda: '"debounce_ms": 120' in served.log.read_text() and
                          '"reconcile_minutes": 5.0' in served.log.read_text())
        write(served.notes / "after_hup.md", "# Hup\n\nhangupword\n")
        assert eventually(lambda: served.uris("hangupword") == {"after_hup.md"})
        # new chunking settings re-chunk the unchanged notes too, and the index records them
        assert eventually(lambda: (chunking_of(served.notes) or "").endswith(":target=60,max=400"))
        assert served.cli("verify").returncode == 0
    finally:
        (served.home / "config.toml").unlink()
        served.proc.send_signal(signal.SIGHUP)
        assert eventually(lambda: (chunking_of(served.notes) or "").endswith(":target=220,max=400"))


def chunking_of(root: Path) -> str | None:
    con = db.connect(root / "index.db", readonly=True)
    try:
        return sql.read_meta(con).get("chunking")
    finally:
        con.close()


def test_second_serve_on_the_same_store_refuses(served):
    r = served.cli("serve")
    assert r.returncode != 0
    assert "already serves" in r.stderr
    assert served.proc.poll() is None


def test_killed_daemon_picks_up_offline_edits_on_restart(tmp_path):
    d = Served(tmp_path)
    write(d.notes / "keep.md", "# Keep\n\nkeepword one\n")
    write(d.notes / "edit.md", "# Edit\n\nofflineold\n")
    write(d.notes / "drop.md", "# Drop\n\ndropword\n")
    write(d.notes / "rename.md", "# Rename\n\nrenameword\n")
    d.start()
    assert d.uris("offlineold") == {"edit.md"}
    d.proc.kill()
    d.proc.wait()
    write(d.notes / "edit.md", "# Edit\n\nofflinenew\n")
    (d.notes / "drop.md").unlink()
    os.rename(d.notes / "rename.md", d.notes / "renamed.md")
    write(d.home / "user" / "fresh.md", "# Fresh\n\nofflinecreated\n")
    d.start()
    try:
        assert found_not(d, "offlinenew", "offlineold", "edit.md")
        assert not d.uris("dropword")
        assert d.uris("renameword") == {"renamed.md"}
        assert d.uris("offlinecreated") == {"user/fresh.md"}
    finally:
        assert d.stop(signal.SIGINT) == 0


def test_without_a_daemon_commands_work_in_process(tmp_path):
    d = Served(tmp_path)
    write(d.notes / "solo.md", "# Solo\n\nsolitaire word\n")
    assert d.cli("index").returncode == 0
    r = d.cli("status", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["stores"]["project"]["daemon"] is False
    write(d.notes / "solo.md", "# Solo\n\nchanged since indexing\n")
    assert json.loads(d.cli("status", "--json").stdout)["stores"]["project"]["stale"] is True
    r = d.cli("search", "solitaire", "--mode", "fts", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["results"][0]["uri"] == "solo.md"


def test_systemd_unit_is_a_valid_user_unit(tmp_path):
    unit = (Path(__file__).resolve().parents[1] / "systemd" / "mdmem.service").read_text()
    assert "ExecStart=@MDMEM@ serve" in unit and "WantedBy=default.target" in unit
    import configparser
    parsed = configparser.ConfigParser(strict=True, interpolation=None)
    parsed.optionxform = str
    parsed.read_string(unit)  # duplicate keys or sections would raise
    assert {"Unit", "Service", "Install"} <= set(parsed.sections())
    assert parsed["Service"].get("ExecReload", "").endswith("$MAINPID")
    if shutil.which("systemd-analyze") is None:
        return  # the structural checks above are all a machine without systemd can do
    filled = tmp_path / "mdmem.service"
    filled.write_text(unit.replace("@MDMEM@", sys.executable + " -m indexer"))
    for mode in (["--user"], []):  # containers often have no user manager; the system one checks syntax too
        r = subprocess.run(["systemd-analyze", *mode, "verify", str(filled)], capture_output=True, text=True)
        if "Failed to initialize manager" not in r.stderr:
            assert r.returncode == 0, r.stderr
            return


def test_peer_credentials_are_read_and_other_users_cannot_connect(served):
    """The daemon itself refuses another user, even when the socket's mode would let them in."""
    import socket as socket_mod
    from indexer.daemon.rpc import peer_uid
    a, b = socket_mod.socketpair(socket_mod.AF_UNIX)
    try:
        assert peer_uid(a) == os.getuid()
    finally:
        a.close()
        b.close()
    if os.geteuid() != 0:
        return  # only root can become another user to try; the test machine runs as root
    sock = served.socket()
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (sock, sock.parent)}
    # open the file-system door (0600 socket, private folder): what is left to refuse is SO_PEERCRED
    os.chmod(sock, 0o666)
    os.chmod(sock.parent, modes[sock.parent] | 0o011)
    try:
        pid = os.fork()
        if pid == 0:  # child: become nobody and talk to the daemon through the opened door
            code = 3
            try:
                os.chdir(sock.parent)
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                s = socket_mod.socket(socket_mod.AF_UNIX)
                s.connect(sock.name)
                s.settimeout(30)
                try:
                    s.sendall(b'{"method": "stats"}\n')
                except BrokenPipeError:
                    pass  # refused and closed before our request went out: the refusal is still readable
                reply = s.makefile().readline()
                code = 0 if "serves only its owner" in reply else 1
            except OSError:
                code = 2  # could not even connect: the test would prove nothing
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    finally:
        for p, mode in modes.items():
            os.chmod(p, mode)
    assert os.waitstatus_to_exitcode(status) == 0


def test_since_until_and_recent_go_through_the_daemon(served):
    write(served.notes / "trips.md", "---\ntype: episodic\n---\n\n- 2021-04-02: the kayak trip to the fjord\n"
                                     "- 2026-01-10: the kayak trip to the lake\n")
    assert eventually(lambda: "trips.md" in served.uris("kayak"))
    r = served.cli("search", "kayak trip", "--json", "--since", "2025-01-01")
    assert r.returncode == 0, r.stderr
    assert [h["date"] for h in json.loads(r.stdout)["results"] if h["uri"] == "trips.md"] == ["2026-01-10"]
    r = served.cli("search", "kayak trip", "--json", "--until", "2021-12-31")
    assert [h["content"].split(": ", 1)[1] for h in json.loads(r.stdout)["results"]] == ["the kayak trip to the fjord"]
    r = served.cli("recall", "kayak trip", "--since", "2025-01-01", "--json")
    assert [m["date"] for m in json.loads(r.stdout)["memories"] if m["uri"] == "trips.md"] == ["2026-01-10"]
    assert all(m["date"] >= "2025-01-01" for m in json.loads(r.stdout)["memories"])
    r = served.cli("recent", "--limit", "50", "--json")
    assert r.returncode == 0, r.stderr
    kayaks = [m["text"] for m in json.loads(r.stdout)["results"] if "kayak" in m["text"]]
    assert kayaks == ["- 2026-01-10: the kayak trip to the lake", "- 2021-04-02: the kayak trip to the fjord"]
    r = served.cli("search", "kayak", "--since", "last tuesday")
    assert r.returncode != 0 and "a day such as 2026-03-01 or an age such as 7d" in r.stderr


def test_the_daemon_fills_ranking_vectors_between_jobs_and_status_counts_them(served):
    write(served.home / "user" / "pets.md", PAIRS["user/pets.md"])
    assert eventually(lambda: served.call("status")["global"]["e5"][0] == served.call("status")["global"]["e5"][1] >= 6)
    hits = served.call("search", query="我家的鸟叫什么名字？", limit=1, explain=True, bump=False, scope="global")
    assert "小蓝" in hits[0]["content"] and hits[0]["explain"]["e5_cosine"] > 0.5
