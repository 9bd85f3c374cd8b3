"""What MCP callers read when a call is refused: the core's own messages, in plain sentences."""

import pytest
from pydantic import BaseModel, ValidationError
from typing import Literal

from indexer import config
from indexer.errors import MdmemError
from indexer.mcp.shape import compact, invalid_arguments, plain
from indexer.retrieval.query import make_query

pytestmark = pytest.mark.unit


def _message(call) -> str:
    with pytest.raises(MdmemError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("kwargs,expected", [
    ({"text": " "}, 'Query is empty; give the words; e.g. "backup plan".'),
    ({"text": "x", "limit": 0}, "Limit must be a whole number of 1 or more (got 0); e.g. limit=10."),
    ({"text": "x", "min_score": "high"}, "Min_score must be a finite number (got 'high'); e.g. min_score=0.2."),
    ({"text": "x", "space": "../bob"}, None),
])
def test_core_messages_become_one_plain_sentence(kwargs, expected):
    text = plain(_message(lambda: make_query(config.Config(), **kwargs)))
    assert "--" not in text and "mdmem search" not in text and text.endswith(".") and "\n" not in text
    if expected:
        assert text == expected


def test_flags_left_in_a_message_become_argument_names():
    assert plain("--importance must be between 1 and 5") == "Importance must be between 1 and 5."
    assert plain("--file 'x' leaves the store root; `..` is not allowed") == "File 'x' leaves the store root; `..` is not allowed."
    # an instruction for the person running mdmem stays
    assert plain("index was built with x; run `mdmem rebuild` to rebuild it") == \
        "Index was built with x; run `mdmem rebuild` to rebuild it."


def test_validation_errors_name_each_argument():
    class Args(BaseModel):
        query: str
        limit: int = 5
        scope: Literal["all", "global", "project"] = "all"

    with pytest.raises(ValidationError) as info:
        Args.model_validate({"limit": "many", "scope": "everywhere"})
    text = invalid_arguments("memory_search", info.value.errors())
    assert text == ("Bad arguments for memory_search: query is required; limit must be a whole number; "
                    "scope must be one of 'all', 'global' or 'project'.")


def test_compact_keeps_id_place_and_first_words():
    item = {"id": "ab" * 8, "uri": "user/preference.md", "start_line": 5, "end_line": 7, "store": "global",
            "score": 0.9, "content": "# Preferences\n\n- 2025-01-05: I prefer my coffee black. " + "x" * 300}
    small = compact(item)
    assert small["text"].startswith("I prefer my coffee black.") and len(small["text"]) <= 120
    assert small["lines"] == "5-7" and small["score"] == 0.9 and "content" not in small
