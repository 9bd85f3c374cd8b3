// The memory browser's health view: stores, skipped notes, models and their fill, jobs, doctor's checks.
// Loaded before app.js, whose helpers (el, t, api, run, state) it calls when the view is shown.
"use strict";

function fillBar(label, have, all) {
  // a <progress> is read out by screen readers as "label, N percent"
  const bar = el("progress", { max: String(Math.max(all, 1)), value: String(Math.min(have, all)), "aria-label": label });
  return el("p", { class: "meta" }, `${label}: ${have} / ${all} `, bar);
}

function modelsPart(models, stores) {
  const roles = Object.entries(models.roles).map(([role, r]) => el("li", {
    text: `${t(`role_${role}`)}: ${r.provider}${r.model ? ` ${r.model}` : ""}${r.base_url ? ` (${r.base_url})` : ""}` }));
  const fills = Object.entries(models.stores).filter(([name]) => name in stores).map(([name, s]) => {
    const f = s.fill || {};
    return el("li", {}, el("strong", { text: name }), ` ${s.embedder || t("notIndexed")}`,
      fillBar(t("vectors"), f.vectors || 0, (f.vectors || 0) + (f.vectors_pending || 0)),
      fillBar(t("rankingVectors"), f.ranking_vectors || 0, f.ranking_texts || 0));
  });
  return [el("h2", { text: t("models") }), el("ul", {}, ...roles), el("ul", { class: "plain" }, ...fills)];
}

function jobsPart(jobs) {
  const running = Object.entries(jobs.running).map(([name, job]) => el("li", {
    text: `${name}: ${job || t("idle")} · ${t("pending")} ${jobs.waiting[name] ?? 0}` }));
  const every = Object.entries(jobs.every_minutes).map(([job, minutes]) => `${job} ${t("every")} ${minutes} min`);
  return [el("h2", { text: t("jobs") }), el("ul", {}, ...running), el("p", { class: "meta", text: every.join(" · ") })];
}

function doctorPart() {
  const out = el("ul", { "aria-live": "polite" });
  const go = el("button", { type: "button", text: t("runChecks"), onclick: run(async () => {
    go.disabled = true;
    out.replaceChildren(el("li", { text: t("loading") }));
    try {
      const got = await api("POST", "/v1/ui/doctor", {});
      out.replaceChildren(...got.checks.map((c) => el("li", { class: c.ok ? "ok" : "bad",
        text: `${c.ok ? t("checkOk") : t("checkBad")} · ${c.name}: ${c.detail}` })));
    } finally { go.disabled = false; }
  }) });
  return [el("h2", { text: t("doctor") }), go, out];
}

function healthView(root) {
  const body = el("tbody");
  const skipped = el("ul");
  const more = el("div");
  const cols = ["files", "chunks", "vectors", "vectors_pending", "pending", "skipped", "last_sync"];
  const heads = [t("store"), t("notes"), t("chunks"), t("vectors"), t("vectorsPending"), t("pending"),
    t("skipped"), t("lastSync")];
  let shown = "";
  const load = async () => {
    const got = await api("GET", "/v1/ui/status");
    body.replaceChildren(...Object.entries(got.stores).map(([name, s]) =>
      el("tr", {}, el("th", { scope: "row", text: name }), ...cols.map((c) => el("td", { text: String(s[c] ?? "") })))));
    const why = Object.entries(got.stores).flatMap(([name, s]) =>
      Object.entries(s.skipped_notes || {}).map(([uri, reason]) => el("li", { text: `${name}: ${reason.includes(uri) ? reason : `${uri}: ${reason}`}` })));
    skipped.replaceChildren(...(why.length ? why : [el("li", { text: t("noneSkipped") })]));
    const now = JSON.stringify([got.models, got.jobs]);
    if (now !== shown) { shown = now; more.replaceChildren(...modelsPart(got.models, got.stores), ...jobsPart(got.jobs)); }
  };
  root.append(el("div", { class: "scroll" }, el("table", {},
    el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", { scope: "col", text: h })))), body)),
  el("h2", { text: t("skipped") }), skipped, more, ...doctorPart());
  run(load)();
  state.timer = setInterval(() => { if (!document.hidden) run(load)(); }, REFRESH_MS);
}
