"""Markdown tables and mdmem/peer ratios from the benchmark results."""


def _f(v, fmt="{:.2f}"):
    return "-" if v is None else fmt.format(v)


def _wall(r, key):
    return (r.get(key) or {}).get("wall_s")


def _rows(r):
    """(label, figures) for one result; mdmem gives one row per search mode."""
    if r["peer"] != "mdmem" or r.get("status") != "ok":
        return [(r["peer"], r)]
    return [(f"mdmem ({m})", {**r, "queries": d["queries"]}) for m, d in r["by_mode"].items()]


def ratios(results):
    md = next((r for r in results if r["peer"] == "mdmem" and r.get("status") == "ok"), None)
    if not md:
        return {}
    out = {}
    for r in results:
        if r["peer"] == "mdmem" or r.get("status") != "ok":
            continue
        row = {k: _ratio(_wall(md, k), _wall(r, k)) for k in ("index_full", "reindex_one_edit")}
        for mode, d in md["by_mode"].items():
            row[f"query_mean_{mode}"] = _ratio(d["queries"]["mean_s"], r["queries"]["mean_s"])
        out[r["peer"]] = row
    return out


def _ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def table(results, rat):
    lines = ["| Tool | Full index (s) | One-file update (s) | No-op re-index (s) | Query mean (s) | "
             "Query p50 (s) | Hit@10 | Peak RSS index / query (MB) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        for label, d in _rows(r):
            if d.get("status") != "ok":
                why = " ".join(d.get("reason", "").split()).replace("|", "/")[:160]
                lines.append(f"| {label} | {d.get('status')}: {why} |||||||")
                continue
            q = d["queries"]
            rss = f"{_f((d['index_full'] or {}).get('peak_mb'), '{}')} / {_f(q['peak_rss_mb'], '{}')}"
            lines.append(f"| {label} | {_f(_wall(d, 'index_full'))} | {_f(_wall(d, 'reindex_one_edit'))} | "
                         f"{_f(_wall(d, 'reindex_noop'))} | {_f(q['mean_s'], '{:.3f}')} | "
                         f"{_f(q['p50_s'], '{:.3f}')} | {q['hits_at_10']}/{q['n']} | {rss} |")
    if rat:
        pre = "query_mean_"
        modes = sorted({k[len(pre):] for v in rat.values() for k in v if k.startswith(pre)})
        lines += ["", "| mdmem / peer | Full index | One-file update | "
                  + " | ".join(f"Query mean ({m})" for m in modes) + " |",
                  "|---|---:|---:|" + "---:|" * len(modes)]
        for peer, v in rat.items():
            cells = [v["index_full"], v["reindex_one_edit"]] + [v.get(f"query_mean_{m}") for m in modes]
            lines.append(f"| {peer} | " + " | ".join(_f(c, "{:.3f}") for c in cells) + " |")
    return "\n".join(lines)
