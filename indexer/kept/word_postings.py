"""A big store's common words and the rows holding them, kept beside the index: FTS5's own BM25 in numpy.

FTS5 scores every row that holds any word of a query, about 1 us a row, and counts every row of each
word again for its idf: a question whose words are all common (each in 20k-200k of a million rows) spent
0.2-0.8 s there. Kept as arrays (rowid, a code for the word's count in each column) with every row's
length, the same sum takes about 10 ns a row. Rare words stay with FTS5: their rows are few.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os

import numpy as np

from indexer.errors import MdmemError
from indexer.index import db
from indexer.index import sql
from indexer.index.sql.fts_topk import B, K1, WEIGHTS
from indexer.notes.textseg import stopwords
from indexer.private_files import create_private
from indexer.kept.copy import KeptCopy
from indexer.kept.job import KeptJob

VERSION = 2
MIN_ROWS = 50_000  # stores from this many chunks keep their common words (below, FTS5 alone is quick)
# a word in at least 1/1000 of the rows (and 1,000 rows) is kept; FTS5 scores the rarer ones. At 1M padded
# rows the words of 1,000-2,500 rows add 7.7M rows to the 111M kept (46 MB) and take a third off the cost of
# the rare words FTS5 still scores (bench/text_scale.py, BENCHMARKS)
COMMON_SHARE = 1000
COMMON_MIN = 1_000
SAVE_CHANGES = 20_000  # rows written or removed since the copy was made before it is made again
REGROW = 2  # ... or once the store has this many times the rows it was made from (new common words)
SAMPLE = 32  # (rowid, content hash) pairs that tell the same file from one `rebuild` made again
COLUMNS = ("content", "uri", "section")


def common_at(rows: int) -> int:
    return max(COMMON_MIN, rows // COMMON_SHARE)


def freq_of(counts: tuple[int, int, int]) -> float:
    """A word's weighted count in a row as FTS5 adds it up: one weight per instance, column by column."""
    f = 0.0
    for weight, n in zip(WEIGHTS, counts):
        for _ in range(n):
            f += weight
    return f


class Snapshot:
    """One made copy: each common word's rows (sorted) and count codes in a file mapped into memory, every row's
    length, and where the copy stands in the store (last rowid, last removal, a sample of rows' texts)."""

    def __init__(self, terms: dict[str, tuple[int, int]], data: np.ndarray, freqs: np.ndarray, lengths: np.ndarray,
                 present: np.ndarray, top: int, seq: int, sample: list, peaks: dict[str, tuple[float, int]]):
        self.terms, self.data, self.freqs, self.peaks = terms, data, freqs, peaks
        self.lengths, self.present, self.top, self.seq, self.sample = lengths, present, top, seq, sample

    def view(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, count codes) of a common word, read from the mapped file."""
        at, n = self.terms[term]
        return (np.frombuffer(self.data, dtype=np.uint32, count=n, offset=at),
                np.frombuffer(self.data, dtype=np.uint16, count=n, offset=at + 4 * n))

    @property
    def postings(self) -> int:
        return sum(n for _at, n in self.terms.values())


def _never_asked(con) -> set[str]:
    """Index terms of words no question searches for (stopwords, lone letters): their rows are never kept."""
    return {t for w in stopwords() for _s, t in db.index_terms(con, w)}


def make(con, path: str) -> Snapshot:
    """Read the common words' rows from FTS5 in one snapshot of the store and write them beside the index,
    a word at a time (memory holds one word's rows); returns the copy mapped from the file written."""
    for left in glob.glob(glob.escape(path) + ".*.tmp"):
        with contextlib.suppress(OSError):
            os.remove(left)  # a write cut short by a kill
    tmp, side = f"{path}.{os.getpid()}.tmp", f"{path}.{os.getpid()}.side.tmp"
    for part in (tmp, side):
        create_private(part)  # words of private notes: the index file's own mode, from the first byte
    skip = _never_asked(con)
    with db.read_snapshot(con):
        rows, _tokens = sql.fts_totals(con)
        top, seq = sql.fts_rowid_top(con), sql.removal_seq(con)
        lengths = np.zeros(top + 1, dtype=np.int32)
        present = np.zeros(top + 1, dtype=bool)
        for rowid, n in sql.row_lengths(con):
            if rowid <= top:
                lengths[rowid], present[rowid] = n, True
        terms: dict[str, tuple[int, int]] = {}
        peaks: dict[str, tuple[float, int]] = {}  # the word's largest weighted count, its shortest row
        kinds: dict[int, int] = {}  # packed (content, uri, section) counts -> code
        kind_freq: list[float] = []
        at = 0
        with open(tmp, "wb") as f:
            for term, _n in sorted(sql.terms_in_rows(con, common_at(rows))):
                if term in skip or (len(term) == 1 and term.isascii()):
                    continue
                found = np.array(sql.term_rows(con, term), dtype=np.int64).reshape(-1, 4)
                if not len(found):
                    continue
                packed = (found[:, 1] << 40) | (found[:, 2] << 20) | found[:, 3]
                distinct, inverse = np.unique(packed, return_inverse=True)
                mine = []
                for p in distinct.tolist():
                    code = kinds.get(p)
                    if code is None:
                        code = kinds[p] = len(kinds)
                        kind_freq.append(freq_of((p >> 40, (p >> 20) & 0xFFFFF, p & 0xFFFFF)))
                    mine.append(code)
                codes = np.array(mine, dtype=np.int64)[inverse]
                if len(kinds) > 65535:
                    raise ValueError("too many distinct word counts for 16-bit codes")
                peaks[term] = (max(kind_freq[c] for c in mine), int(lengths[found[:, 0]].min()))
                n = len(found)
                f.write(found[:, 0].astype(np.uint32).tobytes())
                f.write(codes.astype(np.uint16).tobytes())
                if n % 2:
                    f.write(b"\0\0")  # the next word's rowids start on four bytes
                terms[term] = (at, n)
                at += 6 * n + 2 * (n % 2)
        picks = np.flatnonzero(present)
        picks = picks[np.linspace(0, len(picks) - 1, min(SAMPLE, len(picks))).astype(int)].tolist() if len(picks) else []
        sample = sorted(sql.hashes_for_fts_rowids(con, picks).items())
    freqs = np.array(kind_freq or [0.0], dtype=np.float64)
    names = sorted(terms)
    meta = {"version": VERSION, "top": top, "seq": seq, "sample": sample, "bytes": os.path.getsize(tmp)}
    with open(side, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), names=np.array(names, dtype=str),
                 spans=np.array([terms[t] for t in names], dtype=np.int64).reshape(-1, 2), freqs=freqs,
                 fmax=np.array([peaks[t][0] for t in names], dtype=np.float64),
                 dmin=np.array([peaks[t][1] for t in names], dtype=np.int64),
                 lengths=lengths, present=present)
    os.replace(tmp, path)
    os.replace(side, path + ".npz")
    snap = read(path)
    if snap is None:
        raise ValueError(f"{path} could not be read back")
    return snap


def read(path: str) -> Snapshot | None:
    """The copy written beside the index, mapped (pages are read as queries touch them); None if unusable."""
    try:
        with np.load(path + ".npz") as side:
            meta = json.loads(str(side["meta"]))
            if meta.get("version") != VERSION or os.path.getsize(path) != meta["bytes"]:
                return None
            names, spans = side["names"].tolist(), side["spans"]
            freqs, lengths, present = side["freqs"], side["lengths"], side["present"]
            fmax, dmin = side["fmax"].tolist(), side["dmin"].tolist()
        data = np.memmap(path, dtype=np.uint8, mode="r") if meta["bytes"] else np.zeros(0, np.uint8)
    except (OSError, ValueError, KeyError):
        return None
    terms = {t: (int(a), int(n)) for t, (a, n) in zip(names, spans.tolist())}
    return Snapshot(terms, data, freqs, lengths, present, int(meta["top"]), int(meta["seq"]),
                    [tuple(p) for p in meta["sample"]], dict(zip(names, zip(fmax, dmin))))


class WordPostings(KeptCopy):
    """One store's common words, followed from the store: rows past the last one seen are read and split into
    words as FTS5 does; removed rows come from the removal log that deleting a chunk writes."""

    kind = "words"

    def __init__(self, path: str):
        super().__init__(path)
        self._file = path + ".words"
        self._jobs = KeptJob(path, "word-postings", (MdmemError, OSError, ValueError, MemoryError))
        self._snap: Snapshot | None = None

    @property
    def ready(self) -> bool:
        return self._snap is not None

    def nbytes(self) -> int:
        """The arrays copied out of the mapped file and the rows written since (their words: about 100 bytes)."""
        if self._snap is None:
            return 0
        return self._lengths.nbytes + self._live.nbytes + 100 * len(self._added)

    def drop(self) -> None:
        with self.lock:
            self._install(None)

    def _install(self, snap: Snapshot | None) -> None:
        self._snap = snap
        if snap is None:
            return
        self._lengths = snap.lengths.copy()
        self._live = snap.present.copy()  # rows whose words the snapshot holds (and which are still there)
        self._gone: np.ndarray | None = np.zeros(0, np.intp)  # the copy's rows no longer live (None: to count)
        self._norm: tuple[float, np.ndarray] | None = None  # (avgdl, each row's length term) of the last query
        self._added: dict[int, dict[str, float]] = {}  # rows written since: their common words' weighted counts
        self._added_peaks: dict[str, tuple[float, int]] = {}  # ... and each word's peak among them (for bounds)
        self._by_term: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._counts: dict[str, int] = {}
        self._top, self._seq, self._struct = snap.top, snap.seq, None
        self._rows = int(self._live.sum())
        self._changed = 0

    # --- following the store ------------------------------------------------------------------------------

    def refresh(self, con) -> bool:
        """Bring the copy in step with what is committed (the caller holds `lock`, inside one read snapshot);
        False when it cannot answer now (not made yet, or being made again)."""
        if self._snap is None:
            self._start(self._prepare)
            return False
        struct = sql.fts_structure(con)
        if struct == self._struct:
            return True
        if not self._catch_up(con):
            self._install(None)
            self._start(self._prepare)
            return False
        self._struct = struct
        if self._changed >= SAVE_CHANGES or self._rows > REGROW * max(1, int(self._snap.present.sum())):
            self._start(self._renew)
        return True

    def _catch_up(self, con) -> bool:
        """Apply removals and new rows since the last look; False when the copy is not this store's any more."""
        if not self._same_file(con):
            return False
        seq = sql.removal_seq(con)
        removed, whole = sql.removals_since(con, self._seq, seq)
        if not whole:
            return False
        for r in removed:
            self._drop(r)
        again = [r for r in dict.fromkeys(removed) if r <= self._top]  # a rowid may be given again
        top = sql.fts_rowid_top(con)
        added = sql.fts_rows_after(con, self._top, top) + sql.fts_rows_among(con, again)
        if added:
            self._add(con, added)
        self._top, self._seq = max(self._top, top), seq
        self._changed += len(removed) + len(added)
        return sql.fts_totals(con)[0] == self._rows  # else a repair rewrote the index under us

    def _same_file(self, con) -> bool:
        held = dict(self._snap.sample)
        found = sql.hashes_for_fts_rowids(con, list(held))
        return all(held[r] == h for r, h in found.items()) and (bool(found) or not held)

    def _drop(self, rowid: int) -> None:
        if rowid < len(self._live) and self._live[rowid]:
            self._live[rowid] = False
            self._rows -= 1
            self._gone = None
        if self._added.pop(rowid, None) is not None:
            self._rows -= 1
            self._by_term.clear()
        self._counts.clear()

    def _add(self, con, rows: list[tuple[int, str, str, str]]) -> None:
        lengths = sql.row_lengths_for(con, [r[0] for r in rows])
        need = max(r[0] for r in rows) + 1
        if need > len(self._lengths):
            grow = max(need, int(len(self._lengths) * 1.25) + 1024)
            self._lengths = np.concatenate([self._lengths, np.zeros(grow - len(self._lengths), np.int32)])
            self._live = np.concatenate([self._live, np.zeros(grow - len(self._live), bool)])
        for rowid, *texts in rows:
            if rowid not in lengths:
                continue  # no full-text row (a repair will follow): counted as missing by the totals check
            self._drop(rowid)
            if rowid < len(self._snap.present) and self._snap.present[rowid]:
                self._live[rowid] = False  # the snapshot's words of an earlier row with this rowid no longer apply
                self._gone = None
            counts: dict[str, list[int]] = {}
            for col, text in enumerate(texts):
                for terms in db.stored_terms(con, text or ""):
                    for t in terms:
                        if t in self._snap.terms:
                            counts.setdefault(t, [0, 0, 0])[col] += 1
            self._added[rowid] = {t: freq_of(tuple(c)) for t, c in counts.items()}
            self._lengths[rowid] = lengths[rowid]
            for t, f in self._added[rowid].items():
                old = self._added_peaks.get(t, (0.0, lengths[rowid]))
                self._added_peaks[t] = (max(old[0], f), min(old[1], lengths[rowid]))
            self._norm = None
            self._rows += 1
        self._by_term.clear()
        self._counts.clear()

    # --- answering ----------------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """One past the largest rowid the copy knows: the length of a dense array by rowid."""
        return len(self._lengths)

    def holds(self, term: str) -> bool:
        return self._snap is not None and term in self._snap.terms

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, weighted counts) of the rows holding a common word now (the caller holds `lock`)."""
        snap = self._snap
        rowids, codes = snap.view(term)
        rowids, freqs = rowids.astype(np.intp), snap.freqs[codes]
        gone = self._gone_rows()
        if len(gone):
            # rows removed since the copy was made: found by bisection and cut out (a mask over every row of a
            # common word cost a third of a query, and a daemon that has seen one edit always has some)
            at = np.searchsorted(rowids, gone)
            hit = at < len(rowids)
            at = at[hit][rowids[at[hit]] == gone[hit]]
            if len(at):
                rowids, freqs = np.delete(rowids, at), np.delete(freqs, at)
        if self._added:
            extra = self._by_term.get(term)
            if extra is None:
                got = [(r, f[term]) for r, f in self._added.items() if term in f]
                extra = self._by_term[term] = (np.array([r for r, _f in got], dtype=np.int64),
                                               np.array([f for _r, f in got], dtype=np.float64))
            if len(extra[0]):
                rowids, freqs = np.concatenate([rowids, extra[0]]), np.concatenate([freqs, extra[1]])
        return rowids, freqs

    def counts_at(self, term: str, rows: np.ndarray) -> np.ndarray:
        """A common word's weighted count in each of these rows (sorted), 0 where it is absent, found by
        bisection in its list (the caller holds `lock`)."""
        snap = self._snap
        listed, codes = snap.view(term)
        f = np.zeros(len(rows), dtype=np.float64)
        at = np.searchsorted(listed, rows)
        hit = at < len(listed)
        hit[hit] = listed[at[hit]] == rows[hit]
        hit &= self._live[rows]  # the copy's words of a row removed (or given again) no longer count
        f[hit] = snap.freqs[codes[at[hit]]]
        if self._added:
            for i, r in enumerate(rows.tolist()):
                written = self._added.get(r)
                if written is not None:
                    f[i] = written.get(term, 0.0)
        return f

    def _gone_rows(self) -> np.ndarray:
        if self._gone is None:
            present = self._snap.present
            self._gone = np.flatnonzero(present & ~self._live[:len(present)])
        return self._gone

    def norms(self, avgdl: float) -> np.ndarray:
        """K1 * (1 - B + B * length / avgdl) of every row (the caller holds `lock`)."""
        return self._length_terms(avgdl)

    def bound(self, term: str, idf: float, avgdl: float) -> float:
        """More than any row's share from this word can be: its largest count over its shortest row."""
        fmax, dmin = self._snap.peaks[term]
        if term in self._added_peaks:
            more_f, less_d = self._added_peaks[term]
            fmax, dmin = max(fmax, more_f), min(dmin, less_d)
        return idf * (fmax * (K1 + 1.0)) / (fmax + K1 * ((1 - B) + (B * dmin) / avgdl)) * (1 + 1e-9)

    def _length_terms(self, avgdl: float) -> np.ndarray:
        """K1 * (1 - B + B * length / avgdl) of every row, the same double FTS5 makes a row at a time; made
        again only when the totals move (a write), so a query reads one array instead of four passes."""
        if self._norm is None or self._norm[0] != avgdl or len(self._norm[1]) != len(self._lengths):
            self._norm = (avgdl, K1 * ((1 - B) + (B * self._lengths.astype(np.float64)) / avgdl))
        return self._norm[1]

    def doc_count(self, term: str) -> int | None:
        """Rows holding a common word as of the last refresh (None for another word): FTS5's count, read free."""
        with self.lock:
            if self._snap is None or term not in self._snap.terms:
                return None
            return self.count(term)

    def count(self, term: str) -> int:
        """Rows holding a common word now (the caller holds `lock`)."""
        n = self._counts.get(term)
        if n is None:
            n = self._counts[term] = len(self.postings(term)[0])
        return n

    # --- making, saving and reading -----------------------------------------------------------------------

    def _prepare(self, con) -> None:
        snap = read(self._file)
        if snap is not None:
            with self.lock:
                self._install(snap)
                with db.read_snapshot(con):
                    ok = self._catch_up(con) and self._changed < SAVE_CHANGES
                if ok:
                    return
                self._install(None)
        self._renew(con)

    def _renew(self, con) -> None:
        snap = make(con, self._file)
        with self.lock:
            self._install(snap)  # rows written since its snapshot come in at the next refresh
