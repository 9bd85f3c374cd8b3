// mdmem's memory browser: vanilla JS, no build step, no CDN; every text is put in as text (textContent), never HTML.
"use strict";

const STRINGS = {
  en: {
    search: "Search", recall: "What the prompt gets", memories: "Memories", health: "Health",
    query: "Search memories", question: "Question", space: "Space", all: "Default (notes outside spaces/)", since: "From", until: "To",
    go: "Search", preview: "Show the block", why: "Why it ranked", none: "Nothing found.", tier: "Tier",
    block: "The block", empty: "Nothing would be added to the prompt.", edit: "Edit", save: "Save", cancel: "Cancel",
    forget: "Forget", undo: "Undo", forgotten: "Forgotten.", restored: "Restored.", saved: "Saved.",
    history: "History", newText: "New text", date: "date", recalled: "recalled", restated: "restated",
    strength: "strength", score: "score", store: "Store", notes: "Notes", chunks: "Chunks", vectors: "Vectors",
    pending: "Notes waiting", vectorsPending: "Vectors waiting", skipped: "Skipped notes", noneSkipped: "No note was skipped.", lastSync: "Last sync",
    refresh: "Refresh", loading: "Loading…", views: "Views", import: "Import",
    storeAll: "All stores", type: "Type", anyType: "Any type", note: "Note (part of its path)", supersede: "Supersede",
    newValue: "The new value (the old line stays, struck through)", superseded: "Superseded; the old line is kept.",
    models: "Models", role_embedder: "Embedder",
    role_ranker: "Ranking model", role_llm: "Language model", notIndexed: "not indexed yet",
    rankingVectors: "Ranking vectors", jobs: "Jobs", idle: "idle", every: "every", doctor: "Checks (mdmem doctor)",
    runChecks: "Run the checks", checkOk: "OK", checkBad: "Problem", path: "Folder or file on this computer",
    format: "Format", formatAuto: "Recognise it", spaceOpt: "Space (optional)", previewImport: "Preview",
    previewTitle: "Preview: nothing is written yet", importNow: "Import", imported: "Imported.", files: "Files",
    wouldAdd: "Would add", added: "Added", intoNotes: "notes", already: "Already there", redacted: "Secrets masked",
    hiddenLeft: "Hidden or system messages left out", otherFiles: "Files of other kinds skipped",
    damaged: "Damaged files (left out)", wouldWrite: "The memories it would write", written: "The memories written",
    notListed: "more not listed here", nothingImportable: "nothing importable",
    importHelp: "A SillyTavern data folder (data/default-user) or one of its files, or a mem0 export (JSON). A preview comes first.",
    types: { preference: "preference", fact: "fact", instruction: "instruction", decision: "decision", entity: "entity",
      episodic: "episodic" },
    login: "This page needs a login: run `mdmem ui` in a terminal, it opens a fresh link.",
  },
  zh: {
    search: "搜索", recall: "提示词会得到什么", memories: "记忆", health: "状态",
    query: "搜索记忆", question: "问题", space: "空间", all: "默认（spaces/ 之外的笔记）", since: "从", until: "到",
    go: "搜索", preview: "显示内容块", why: "排序原因", none: "没有找到。", tier: "层级",
    block: "内容块", empty: "不会向提示词添加任何内容。", edit: "编辑", save: "保存", cancel: "取消",
    forget: "遗忘", undo: "撤销", forgotten: "已遗忘。", restored: "已恢复。", saved: "已保存。",
    history: "历史", newText: "新文本", date: "日期", recalled: "被召回", restated: "被重述",
    strength: "强度", score: "得分", store: "存储", notes: "笔记", chunks: "片段", vectors: "向量",
    pending: "待索引笔记", vectorsPending: "待生成向量", skipped: "跳过的笔记", noneSkipped: "没有跳过任何笔记。", lastSync: "上次同步",
    refresh: "刷新", loading: "加载中…", views: "视图", import: "导入",
    storeAll: "全部存储", type: "类型", anyType: "任意类型", note: "笔记（路径的一部分）", supersede: "取代",
    newValue: "新的值（旧的一行保留，加删除线）", superseded: "已取代；旧的一行已保留。",
    models: "模型", role_embedder: "嵌入模型",
    role_ranker: "排序模型", role_llm: "语言模型", notIndexed: "尚未索引",
    rankingVectors: "排序向量", jobs: "任务", idle: "空闲", every: "每", doctor: "检查（mdmem doctor）",
    runChecks: "运行检查", checkOk: "正常", checkBad: "有问题", path: "本机上的文件夹或文件",
    format: "格式", formatAuto: "自动识别", spaceOpt: "空间（可选）", previewImport: "预览",
    previewTitle: "预览：尚未写入任何内容", importNow: "导入", imported: "已导入。", files: "文件",
    wouldAdd: "将添加", added: "已添加", intoNotes: "笔记", already: "已存在", redacted: "已遮盖密钥",
    hiddenLeft: "省略的隐藏或系统消息", otherFiles: "跳过的其他类型文件",
    damaged: "损坏的文件（已省略）", wouldWrite: "将写入的记忆", written: "已写入的记忆", notListed: "条未在此列出", nothingImportable: "没有可导入的内容",
    importHelp: "SillyTavern 数据文件夹（data/default-user）或其中的文件，或 mem0 导出文件（JSON）。先显示预览。",
    types: { preference: "偏好", fact: "事实", instruction: "指示", decision: "决定", entity: "实体", episodic: "经历" },
    login: "此页面需要登录：在终端运行 `mdmem ui`，它会打开新的登录链接。",
  },
};
const LANG = (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
const t = (key) => STRINGS[LANG][key] || STRINGS.en[key];
const VIEWS = ["search", "recall", "memories", "health", "import"];
const TYPES = ["preference", "fact", "instruction", "decision", "entity", "episodic"];
const REFRESH_MS = 1000; // a note saved in an editor shows up without a reload, within a second of being indexed
const state = { csrf: null, view: "search", timer: null, spaces: [], stores: ["global"] };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function notice(text, ...extra) {
  const box = document.getElementById("notice");
  box.replaceChildren(...[text, ...extra].filter((part) => part !== undefined && part !== "")); // none: hidden
}

async function api(method, path, body, signal) {
  const headers = { "Content-Type": "application/json" };
  if (state.csrf) headers["X-Mdmem-CSRF"] = state.csrf;
  const answer = await fetch(path, { method, headers, credentials: "same-origin", signal,
    body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await answer.json().catch(() => ({}));
  if (answer.status === 401) { showLogin(); throw new Error(t("login")); }
  if (!answer.ok) throw new Error(data.detail || String(answer.status));
  return data;
}

function showLogin() {
  clearInterval(state.timer);
  document.getElementById("tabs").replaceChildren();
  document.getElementById("view").replaceChildren(el("p", { text: t("login") }));
}

function field(label, input, grow) {
  return el("label", grow ? { class: "grow" } : {}, label, input);
}

function spaceSelect(id) {
  const select = el("select", { id }, el("option", { value: "", text: t("all") }));
  for (const s of state.spaces) select.append(el("option", { value: s.name, text: `${s.name} (${s.total_memories})` }));
  if (state.spaces.length) select.value = state.spaces[0].name; // mem0 clients and chats write into named spaces
  return select;
}

function storeSelect(id) {
  // the stores this daemon serves, then all of them together (searched as one ranking)
  const names = state.stores.length > 1 ? [...state.stores, "all"] : state.stores;
  return el("select", { id }, ...names.map((n) => el("option", { value: n, text: n === "all" ? t("storeAll") : n })));
}

const typeName = (kind) => STRINGS[LANG].types[kind] || kind;

function typeSelect(id) {
  return el("select", { id }, el("option", { value: "", text: t("anyType") }),
    ...TYPES.map((k) => el("option", { value: k, text: typeName(k) })));
}

function meta(parts) {
  return el("p", { class: "meta", text: parts.filter(Boolean).join(" · ") });
}

function where(m) {
  return `${m.uri}:${m.start_line}-${m.end_line}`;
}

function run(task) {
  return (event) => {
    if (event) event.preventDefault();
    task().catch((err) => notice(err.message));
  };
}

// -- views -------------------------------------------------------------------------------------------
function searchView(root) {
  const query = el("input", { type: "search", id: "q", required: "" });
  const space = spaceSelect("q-space");
  const store = storeSelect("q-store");
  const type = typeSelect("q-type");
  const since = el("input", { type: "date", id: "q-since" });
  const until = el("input", { type: "date", id: "q-until" });
  const list = el("ol", { class: "items", "aria-live": "polite" });
  // each keystroke asks at once and drops the search still out (its answer would be stale): the newest words are
  // answered after one search's time, not after the rest of the one before it too (bench/ui_bench.py, typing ->
  // results p95 at 10,000 memories: 136-166 ms against 162-228 ms when waiting for it, three runs each)
  let inflight = null;
  const find = async () => {
    if (!query.value.trim()) return;
    if (inflight) inflight.abort();
    const mine = inflight = new AbortController();
    const words = query.value;
    try {
      const found = await api("POST", "/v1/ui/search", { query: words, space: space.value, store: store.value,
        type: type.value, since: since.value, until: until.value }, mine.signal);
      if (mine !== inflight) return; // a newer search went out while this answer was read
      list.replaceChildren(...found.results.map(hitItem));
      if (!found.results.length) list.append(el("li", { text: t("none") }));
      list.setAttribute("data-query", words); // what the shown results answer (the typing benchmark waits on it)
    } catch (err) {
      if (err.name !== "AbortError") throw err;
    } finally {
      if (mine === inflight) inflight = null;
    }
  };
  query.addEventListener("input", run(find));
  for (const filter of [space, store, type, since, until]) filter.addEventListener("change", run(find));
  const form = el("form", { role: "search", onsubmit: run(find) }, field(t("query"), query, true), field(t("space"), space),
    field(t("store"), store), field(t("type"), type), field(t("since"), since), field(t("until"), until),
    el("button", { type: "submit", text: t("go") }));
  root.append(form, list);
  query.focus();
}

function hitItem(hit) {
  const why = el("pre", { hidden: "" });
  why.textContent = JSON.stringify(hit.explain || {}, null, 2);
  const toggle = el("button", { type: "button", "aria-expanded": "false", text: t("why"), onclick: () => {
    why.hidden = !why.hidden;
    toggle.setAttribute("aria-expanded", String(!why.hidden));
  } });
  return el("li", {}, el("p", { class: "text", text: hit.content }),
    meta([where(hit), hit.date, typeName(hit.type), `${t("score")} ${hit.score}`, hit.store]), el("div", { class: "actions" }, toggle), why);
}

function recallView(root) {
  const question = el("input", { type: "text", id: "r-q", required: "" });
  const space = spaceSelect("r-space");
  const out = el("section", { "aria-live": "polite" });
  root.append(el("form", { onsubmit: run(async () => {
    const got = await api("POST", "/v1/recall/", { query: question.value, user_id: space.value || undefined });
    out.replaceChildren(el("p", { text: `${t("tier")}: ${got.tier} · ${(got.memories || []).length}` }),
      el("h2", { text: t("block") }), el("pre", { text: got.text || t("empty") }));
  }) }, field(t("question"), question, true), field(t("space"), space),
  el("button", { type: "submit", text: t("preview") })), out);
  question.focus();
}

function memoriesView(root) {
  const space = spaceSelect("m-space");
  const store = storeSelect("m-store");
  const type = typeSelect("m-type");
  const note = el("input", { type: "text", id: "m-note", spellcheck: "false" });
  const list = el("ol", { class: "items" });
  let shown = "";
  const load = async (force) => {
    // an open edit or history is never replaced under the user's hands, nor an unchanged list (focus stays put)
    if (force !== true && list.querySelector(".extra:not(:empty)")) return;
    const asked = { space: space.value, store: store.value, type: type.value, note: note.value.trim(), limit: 100 };
    const got = await api("POST", "/v1/ui/memories", asked);
    const now = JSON.stringify([asked, got.results]);
    if (now === shown) return;
    shown = now;
    list.replaceChildren(...got.results.map((m) => memoryItem(m, load)));
    if (!got.results.length) list.append(el("li", { text: t("none") }));
  };
  for (const filter of [space, store, type]) filter.addEventListener("change", run(() => load(true)));
  root.append(el("form", { onsubmit: run(() => load(true)) }, field(t("space"), space), field(t("store"), store),
    field(t("type"), type), field(t("note"), note, true), el("button", { type: "submit", text: t("refresh") })), list);
  run(load)();
  state.timer = setInterval(() => { if (!document.hidden) run(load)(); }, REFRESH_MS);
}

function memoryItem(m, reload) {
  const item = el("li", {}, el("p", { class: "text", id: `text-${m.id}`, text: m.text }),
    meta([where(m), m.store, m.space, typeName(m.type), `${t("date")} ${m.date || m.created_at}`, `${t("recalled")} ${m.access_count}`,
      `${t("restated")} ${m.reinforcement}`, `${t("strength")} ${Number(m.strength).toFixed(2)}`]));
  const extra = el("div", { class: "extra" });
  // the page's own routes for one memory: mem0's (/v1/memories/{id}) reach only the global store, these either store
  const one = `/v1/ui/memories/${encodeURIComponent(m.id)}`;
  const writeBox = (label, text, save) => {
    const box = el("textarea", { id: `edit-${m.id}` });
    box.value = text;
    extra.replaceChildren(field(label, box, true), el("div", { class: "actions" },
      el("button", { type: "button", text: t("save"), onclick: run(() => save(box.value)) }),
      el("button", { type: "button", text: t("cancel"), onclick: () => extra.replaceChildren() })));
    box.focus();
  };
  const edit = async () => {
    const now = await api("GET", `${one}/`);
    writeBox(t("newText"), now.memory, async (text) => {
      await api("PUT", `${one}/`, { text });
      extra.replaceChildren(); notice(t("saved")); await reload(true);
    });
  };
  const supersede = async () => writeBox(t("newValue"), "", async (text) => {
    await api("POST", "/v1/ui/supersede", { id: m.id, text });
    extra.replaceChildren(); notice(t("superseded")); await reload(true);
  });
  const forget = async () => {
    await api("DELETE", `${one}/`);
    const undo = el("button", { type: "button", text: t("undo"), onclick: run(async () => {
      await api("POST", `${one}/restore/`, {});
      notice(t("restored")); await reload(true);
    }) });
    notice(t("forgotten") + " ", undo);
    await reload(true);
    undo.focus(); // the forgotten item's button is gone: the keyboard lands on Undo, not at the top of the page
  };
  const history = async () => {
    if (extra.childElementCount) return extra.replaceChildren(); // pressed again: closed, and refreshing resumes
    const events = await api("GET", `${one}/history/`);
    extra.replaceChildren(el("ol", {}, ...events.map((e) => el("li", {
      text: [e.created_at, e.event, e.old_memory, e.new_memory].filter(Boolean).join(" · ") }))));
  };
  // each button is described by its memory's text: a screen reader says which memory "Forget" forgets
  const button = (label, task) => el("button", { type: "button", text: t(label), "aria-describedby": `text-${m.id}`,
    onclick: run(task) });
  item.append(el("div", { class: "actions" }, button("edit", edit), button("supersede", supersede), button("forget", forget),
    button("history", history)), extra);
  return item;
}

// healthView (health.js) and importView (import.js) are loaded before this file
const RENDER = { search: searchView, recall: recallView, memories: memoriesView, health: healthView, import: importView };

async function show(view) {
  clearInterval(state.timer);
  state.view = view;
  const spaces = (await api("GET", "/v1/entities/")).results; // a space a chat made meanwhile is offered too
  // a tab pressed while the first view still waited for its spaces: the later choice is drawn, not overwritten
  if (state.view !== view) return;
  state.spaces = spaces;
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-pressed", String(b.dataset.view === view));
  const root = document.getElementById("view");
  root.replaceChildren(el("h2", { class: "sr-only", text: t(view) })); // each view is a heading to jump to
  notice("");
  RENDER[view](root);
}

async function start() {
  document.documentElement.lang = LANG === "zh" ? "zh-CN" : "en";
  const answer = await fetch("/ui/session", { credentials: "same-origin" });
  if (!answer.ok) return showLogin();
  state.csrf = (await answer.json()).csrf;
  state.stores = Object.keys((await api("GET", "/v1/ui/status")).stores); // global, and the project when served
  const tabs = document.getElementById("tabs");
  tabs.setAttribute("aria-label", t("views"));
  tabs.replaceChildren(...VIEWS.map((v) => el("button", { type: "button", "data-view": v, text: t(v),
    onclick: run(() => show(v)) })));
  // a notice speaks of the last action: the next one in the view clears it first, so the bar stuck to the
  // bottom never lies over the button a narrow screen needs next (a Save under "Restored." at 360 px)
  document.getElementById("view").addEventListener("click", (e) => { if (e.target.closest("button")) notice(); }, true);
  await show(state.view);
}

start().catch((err) => notice(err.message));
