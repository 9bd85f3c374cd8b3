"""PNG charts for docs/BENCHMARKS.md from the JSON that eval.py and perf.py write."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"


def quality(eval_json: Path, dest: Path) -> None:
    """R@10 and nDCG@10 per set, one bar per mode."""
    rows = [r for r in json.loads(eval_json.read_text())["rows"] if not r.get("variant")]
    sets = list(dict.fromkeys(r["set"] for r in rows))
    modes = list(dict.fromkeys(f"{r['mode']} ({r['embedder']})" if r["embedder"] != "-" else r["mode"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, metric in zip(axes, ("R@10", "nDCG@10")):
        width = 0.8 / len(modes)
        for i, mode in enumerate(modes):
            vals = []
            for s in sets:
                match = [r for r in rows if r["set"] == s and
                         (f"{r['mode']} ({r['embedder']})" if r["embedder"] != "-" else r["mode"]) == mode]
                vals.append(match[0][metric] if match else 0)
            ax.bar([x + i * width for x in range(len(sets))], vals, width, label=mode)
        ax.set_xticks([x + width * (len(modes) - 1) / 2 for x in range(len(sets))], sets)
        ax.set_title(metric)
        ax.set_ylim(0, 1)
    axes[0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(dest, dpi=110)
    plt.close(fig)


def latency(perf_jsons: list[Path], dest: Path) -> None:
    """Search p50/p95 per mode against the number of chunks, in-process and through the daemon."""
    points: dict[str, dict[str, list]] = {}
    for r in results(perf_jsons):
        for chunks, by_where in r["search"].items():
            if "in_process" not in by_where:  # files written before the daemon pass existed
                by_where = {"in_process": by_where}
            for where, lat in by_where.items():
                for mode, v in lat.items():
                    if not (isinstance(v, dict) and "p50_ms" in v):
                        continue  # the daemon pass also records its chunk count and start-up reconcile
                    points.setdefault(where, {}).setdefault(mode, []).append((int(chunks), v["p50_ms"], v["p95_ms"]))
    wheres = [w for w in ("in_process", "daemon") if w in points]
    fig, axes = plt.subplots(1, len(wheres), figsize=(5.5 * len(wheres), 3.6), sharey=True, squeeze=False)
    for ax, where in zip(axes[0], wheres):
        for mode, pts in sorted(points[where].items()):
            pts.sort()
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{mode} p50")
            ax.plot([p[0] for p in pts], [p[2] for p in pts], ls="--", color=line.get_color(), label=f"{mode} p95")
        ax.set_xscale("log")
        ax.set_xlabel("chunks in the index")
        ax.set_title("in-process" if where == "in_process" else "through the daemon's socket", fontsize=9)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("ms per query")
    fig.tight_layout()
    fig.savefig(dest, dpi=110)
    plt.close(fig)


def results(perf_jsons: list[Path]) -> list[dict]:
    return [r for f in perf_jsons for r in json.loads(f.read_text())["results"]]


def throughput(perf_jsons: list[Path], dest: Path) -> None:
    """Texts embedded per second by the cold build next to the raw embedder on the same texts (the limit),
    and the rebuild's chunks/s (runs before the texts/s figures count chunks for both)."""
    res = [r for r in results(perf_jsons) if "cold" in r]  # search-only runs built nothing
    labels = [f"{r['files']} files\n{r['chunks']} chunks" for r in res]
    series = {"raw embedder, all cores (limit)": [r["raw_embed"].get("texts_per_s", r["raw_embed"].get("chunks_per_s")) or 0
                                                  for r in res],
              "cold build": [r["cold"].get("embedded_per_s", r["cold"]["chunks_per_s"]) for r in res],
              "rebuild (vectors reused)": [r["rebuild"]["chunks_per_s"] for r in res]}
    fig, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.8 / len(series)
    for i, (name, vals) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(res))], vals, width, label=name)
    ax.set_xticks([x + width for x in range(len(res))], labels)
    ax.set_yscale("log")
    ax.set_ylim(bottom=1)  # bars start at 1 chunk/s so all three stay visible
    ax.set_ylabel("texts embedded (rebuild: chunks) / s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dest, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eval", type=Path, default=OUT / "eval.json")
    ap.add_argument("--perf", type=Path, nargs="+", default=[OUT / "perf.json"],
                    help="one or more perf.py outputs, combined (e.g. a 1k run, a 10k run, a search-only run)")
    ap.add_argument("--dest", type=Path, default=REPO / "docs" / "img")
    args = ap.parse_args()
    args.dest.mkdir(parents=True, exist_ok=True)
    made = []
    if args.eval.exists():
        quality(args.eval, args.dest / "quality.png")
        made.append("quality.png")
    args.perf = [p for p in args.perf if p.exists()]
    if args.perf:
        latency(args.perf, args.dest / "latency.png")
        throughput(args.perf, args.dest / "throughput.png")
        made += ["latency.png", "throughput.png"]
    print("wrote " + ", ".join(str(args.dest / m) for m in made) if made else "no input JSON found")


if __name__ == "__main__":
    main()
