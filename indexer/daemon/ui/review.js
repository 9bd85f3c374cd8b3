// The memory browser's review tab: what `add` decided on its own and what waits for a person (/v1/review/).
// Loaded after app.js, whose helpers (el, api, run, notice, spaceSelect, field, meta) and tables it extends.
"use strict";

Object.assign(STRINGS.en, { review: "Review", accept: "Accept", reject: "Reject", allDecisions: "Whole log",
  nothingWaits: "Nothing waits for review.", propose: "Propose summaries", done: "Done." });
Object.assign(STRINGS.zh, { review: "审核", accept: "接受", reject: "拒绝", allDecisions: "全部记录",
  nothingWaits: "没有待审核的内容。", propose: "生成摘要提议", done: "完成。" });
VIEWS.push("review");

function reviewView(root) {
  const space = spaceSelect("rv-space");
  const everything = el("input", { type: "checkbox", id: "rv-all" });
  const list = el("ol", { class: "items", "aria-live": "polite" });
  const load = async () => {
    const query = new URLSearchParams({ all: String(everything.checked) });
    if (space.value) query.set("user_id", space.value);
    const got = await api("GET", `/v1/review/?${query}`);
    list.replaceChildren(...got.entries.map((e) => decisionItem(e, load)));
    if (!got.entries.length) list.append(el("li", { text: t("nothingWaits") }));
  };
  space.addEventListener("change", run(load));
  everything.addEventListener("change", run(load));
  const propose = run(async () => {
    const got = await api("POST", "/v1/review/consolidate/", {});
    notice(`${t("done")} ${got.proposed}`); await load();
  });
  root.append(el("form", { onsubmit: run(load) }, field(t("space"), space), field(t("allDecisions"), everything),
    el("button", { type: "submit", text: t("refresh") }),
    el("button", { type: "button", text: t("propose"), onclick: propose })), list);
  run(load)();
}

function decisionItem(e, reload) {
  const body = { user_id: e.space || undefined };
  const act = (action, extra = {}) => run(async () => {
    await api("POST", `/v1/review/${e.id}/${action}/`, { ...body, ...extra });
    notice(t("done")); await reload();
  });
  // the memory written (or held back) first, then why; a proposal's summary as it would be written
  const item = el("li", {}, e.action === "proposed" ? el("pre", { text: e.text }) : el("p", { class: "text", text: e.text }),
    el("p", { text: e.reason }), meta([e.id, e.action, e.status, e.at, e.space, e.store]));
  if (e.status !== "pending" && e.status !== "done") return item;
  const extra = el("div", { class: "extra" });
  const edit = () => {
    const box = el("textarea", { id: `rv-edit-${e.id}` });
    box.value = e.text;
    extra.replaceChildren(field(t("newText"), box, true), el("div", { class: "actions" },
      el("button", { type: "button", text: t("save"), onclick: act("edit", { text: box.value }) }),
      el("button", { type: "button", text: t("cancel"), onclick: () => extra.replaceChildren() })));
    box.focus();
  };
  const buttons = e.status === "pending"
    ? [el("button", { type: "button", text: t("accept"), onclick: act("accept") }),
      el("button", { type: "button", text: t("reject"), onclick: act("reject") }),
      el("button", { type: "button", text: t("edit"), onclick: edit })]
    : [el("button", { type: "button", text: t("undo"), onclick: act("undo") })];
  item.append(el("div", { class: "actions" }, ...buttons), extra);
  return item;
}

RENDER.review = reviewView;
