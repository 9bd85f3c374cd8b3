"""SillyTavern's files as imported notes: chats (JSONL), World Info lorebooks and character cards' books."""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from collections import defaultdict
from pathlib import Path

from indexer.notes.imports_model import Entry, ImportedNote, ImportFormatError, load_json, parse_when, slug


def is_chat_header(obj) -> bool:
    """The first line of a chat file: who talks, when the chat began, its metadata (not a group's own file)."""
    return isinstance(obj, dict) and not is_group(obj) and \
        ("chat_metadata" in obj or ("user_name" in obj and "character_name" in obj))


def is_message(obj) -> bool:
    """A chat message: the first line of a group chat, which SillyTavern 1.12 saves without a header."""
    return isinstance(obj, dict) and isinstance(obj.get("mes"), str) and ("is_user" in obj or "name" in obj)


def is_group(obj) -> bool:
    """A group's own file (`groups/<id>.json`): its name, members and chat ids; no messages."""
    return isinstance(obj, dict) and isinstance(obj.get("members"), list) and isinstance(obj.get("chats"), list)


GROUP_HEADER_NAME = "unused"  # what SillyTavern writes as character_name in a group chat's header


def group_name(path: Path) -> str | None:
    """The name of the group a group chat file belongs to, from the `groups/*.json` beside its folder."""
    for candidate in sorted((path.parent.parent / "groups").glob("*.json")):
        try:
            group = json.loads(candidate.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            continue  # another group's damaged file does not decide this chat
        if is_group(group) and (path.stem in group["chats"] or group.get("chat_id") == path.stem) \
                and isinstance(group.get("name"), str) and group["name"].strip():
            return group["name"].strip()
    return None


def parse_chat(path: Path, text: str, space: str | None = None, zone: str = "") -> tuple[list[ImportedNote], int]:
    """A chat file (a metadata line, then one message per line) as journal items per day, and how many
    hidden or system messages were left out.

    The space is the character's (`character_name`, else the chat's folder, which SillyTavern names
    after the character) or, for a group chat, the group's name, unless one is given.
    """
    lines = text.splitlines()
    header, first = None, 0
    for first, raw in enumerate(lines):
        if raw.strip():
            header = load_json(path, raw, first + 1)
            break
    group = is_message(header) or (is_chat_header(header) and header.get("character_name") == GROUP_HEADER_NAME)
    if is_message(header):
        header, first = {}, first - 1  # no header: the first line is already a message
    elif not is_chat_header(header):
        raise ImportFormatError(path, first + 1, "not a SillyTavern chat (the first line has no user_name, "
                                "character_name or chat_metadata); pass --format if it is another format")
    if group and space is None:
        space = group_name(path)
        if space is None:
            raise ImportFormatError(path, None, "a group chat whose group is not in ../groups/*.json; import the "
                                    "whole data folder, or pass --space NAME")
    character = header.get("character_name") or path.parent.name
    started = parse_when(header.get("create_date"), zone)
    by_day: dict[str, list[Entry]] = defaultdict(list)
    last, hidden = started, 0
    for n, raw in enumerate(lines[first + 1:], first + 2):
        if not raw.strip():
            continue
        msg = load_json(path, raw, n)
        if not isinstance(msg, dict) or not isinstance(msg.get("mes", ""), str):
            raise ImportFormatError(path, n, "a message must be an object with a \"mes\" string")
        if not msg.get("mes", "").strip():
            continue  # empty greetings and deleted swipes carry nothing to remember
        if msg.get("is_system"):
            hidden += 1  # hidden by the user, or SillyTavern's own notices: never part of the story
            continue
        when = parse_when(msg.get("send_date"), zone) or last
        if when is None:
            raise ImportFormatError(path, n, "the message has no readable send_date and the chat no create_date")
        last = when
        speaker = msg.get("name") or (header.get("user_name") if msg.get("is_user") else character) or "?"
        by_day[when.strftime("%Y-%m-%d")].append(Entry(text=msg["mes"], when=when, speaker=str(speaker)))
    space = space if space is not None else str(character)
    return [ImportedNote(space=space, uri=f"journal/{day}.md", title=f"Journal {day}", type="episodic",
                         kind="journal", entries=tuple(entries), source=str(path))
            for day, entries in sorted(by_day.items())], hidden


def _as_keys(value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(" ".join(str(k).split()) for k in value if str(k).strip()))


def lore_entries(path: Path, raw_entries, card: bool) -> tuple[Entry, ...]:
    """World Info entries (`{"0": {uid, key, keysecondary, comment, content, disable}}`) or a card book's list
    (`[{id, keys, secondary_keys, comment, name, content, enabled}]`), in SillyTavern's display order."""
    items = list(raw_entries.values()) if isinstance(raw_entries, dict) else raw_entries
    if not isinstance(items, list) or not all(isinstance(e, dict) for e in items):
        raise ImportFormatError(path, None, "\"entries\" must hold entry objects")
    order = sorted(range(len(items)), key=lambda i: (_order_key(items[i]), i))
    out = []
    for i in order:
        e = items[i]
        content = e.get("content")
        if not isinstance(content, str):
            raise ImportFormatError(path, None, f"lore entry {e.get('uid', e.get('id', i))} has no \"content\" text")
        if not content.strip():
            continue
        keys = _as_keys(e.get("keys" if card else "key")) + _as_keys(e.get("secondary_keys" if card else "keysecondary"))
        title = e.get("comment") or e.get("name") or (keys[0] if keys else f"Entry {e.get('uid', e.get('id', i))}")
        disabled = (not e.get("enabled", True)) if card else bool(e.get("disable", False))
        out.append(Entry(text=content, heading=str(title), keys=tuple(dict.fromkeys(keys)), disabled=disabled))
    return tuple(out)


def _order_key(e: dict):
    pos = e.get("displayIndex", e.get("extensions", {}).get("display_index") if isinstance(e.get("extensions"), dict) else None)
    return pos if isinstance(pos, (int, float)) and not isinstance(pos, bool) else float("inf")


def is_lorebook(obj) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("entries"), dict) and \
        all(isinstance(e, dict) and "content" in e for e in obj["entries"].values())


def parse_lorebook(path: Path, obj, space: str | None = None) -> list[ImportedNote]:
    """A World Info file: one lore note named after the book, a section per entry."""
    if not is_lorebook(obj):
        raise ImportFormatError(path, None, "not a SillyTavern World Info file (no \"entries\" object of entries); "
                                "pass --format if it is another format")
    name = obj.get("name") or path.stem
    return [_lore_note(path, str(name), lore_entries(path, obj["entries"], card=False), space)]


def _lore_note(path: Path, name: str, entries: tuple[Entry, ...], space: str | None) -> ImportedNote:
    tags = tuple(dict.fromkeys(k for e in entries for k in e.keys))[:50]
    return ImportedNote(space=space, uri=f"lore/{slug(name)}.md", title=name, type="entity", kind="section",
                        entries=entries, source=str(path), tags=tags)


def card_data(obj):
    """The character of a V1/V2/V3 card (V2 and V3 nest it under "data")."""
    if not isinstance(obj, dict):
        return None
    if str(obj.get("spec", "")).startswith("chara_card") and isinstance(obj.get("data"), dict):
        return obj["data"]
    return obj if "name" in obj and ("first_mes" in obj or "character_book" in obj) else None


def parse_card(path: Path, obj, space: str | None = None) -> list[ImportedNote]:
    """A character card's `character_book` as a lore note in the character's space."""
    data = card_data(obj)
    if data is None:
        raise ImportFormatError(path, None, "not a SillyTavern character card (no spec chara_card_v2/v3 with data)")
    book = data.get("character_book")
    if not isinstance(book, dict) or not book.get("entries"):
        return []  # a card without a lorebook has nothing to import
    name = str(data.get("name") or path.stem)
    entries = lore_entries(path, book["entries"], card=True)
    return [_lore_note(path, str(book.get("name") or f"{name} lorebook"), entries,
                       space if space is not None else name)]


def png_card(path: Path, data: bytes):
    """The card JSON that SillyTavern keeps base64-encoded in a PNG text chunk (`ccv3` preferred, else `chara`)."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ImportFormatError(path, None, "not a PNG image")
    found = _text_chunks(data)
    raw = found.get("ccv3") or found.get("chara")
    if raw is None:
        raise ImportFormatError(path, None, "a PNG without character data (no chara text chunk)")
    try:
        return json.loads(base64.b64decode(raw).decode("utf-8"))
    except (binascii.Error, ValueError) as exc:
        raise ImportFormatError(path, None, f"the PNG's character data is damaged ({exc})") from None


def is_png_card(data: bytes) -> bool:
    """A PNG holding a character (avatars, expression sprites and backgrounds are PNGs too)."""
    return data.startswith(b"\x89PNG\r\n\x1a\n") and bool({"ccv3", "chara"} & set(_text_chunks(data)))


def _text_chunks(data: bytes) -> dict[str, bytes]:
    found, at = {}, 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind in (b"tEXt", b"zTXt", b"iTXt"):
            key, _, value = body.partition(b"\0")
            if kind == b"zTXt":
                value = _inflate(value[1:])
            elif kind == b"iTXt":
                value = value[2:].split(b"\0", 2)[-1]
            found[key.decode("latin-1").lower()] = value
        if kind == b"IEND":
            break
        at += 12 + length
    return found


def _inflate(data: bytes) -> bytes:
    try:
        return zlib.decompress(data)
    except zlib.error:
        return b""  # a damaged compressed chunk reads as empty: the card check says what is missing
