// The memory browser's import view: a SillyTavern data folder or a mem0 export, previewed (a dry run), then imported.
// Loaded before app.js, whose helpers (el, t, api, run, field, notice) it calls when the view is shown.
"use strict";

const IMPORT_FORMATS = ["sillytavern-chat", "sillytavern-lorebook", "sillytavern-card", "mem0"];

function importReport(rep) {
  const kinds = Object.entries(rep.formats).map(([k, n]) => `${n} ${k}`).join(", ") || t("nothingImportable");
  const lines = [`${t("files")}: ${rep.files} (${kinds})`,
    `${rep.dry_run ? t("wouldAdd") : t("added")}: ${rep.added} · ${t("intoNotes")}: ${rep.notes}`,
    `${t("already")}: ${rep.present}`];
  if (rep.redacted) lines.push(`${t("redacted")}: ${rep.redacted}`);
  if (rep.hidden) lines.push(`${t("hiddenLeft")}: ${rep.hidden}`);
  if (rep.skipped.length) lines.push(`${t("otherFiles")}: ${rep.skipped.length}`);
  return [el("ul", {}, ...lines.map((line) => el("li", { text: line }))), ...importedMemories(rep),
    ...(rep.bad.length ? [el("h3", { text: t("damaged") }), el("ul", {}, ...rep.bad.map((b) => el("li", { text: b })))] : [])];
}

// each memory written (or that would be), as its note gets it: the first ones, and how many more
function importedMemories(rep) {
  if (!rep.memories.length) return [];
  const items = rep.memories.map((m) => el("li", {}, el("p", { class: "text", text: m.speaker ? `${m.speaker}: ${m.text}` : m.text }),
    meta([m.date, m.space, m.uri])));
  if (rep.memories_more) items.push(el("li", { class: "meta", text: `${rep.memories_more} ${t("notListed")}` }));
  return [el("h3", { text: rep.dry_run ? t("wouldWrite") : t("written") }), el("ol", { class: "items", id: "i-memories" }, ...items)];
}

function importView(root) {
  const where = el("input", { type: "text", id: "i-path", required: "", spellcheck: "false",
    placeholder: "/home/me/SillyTavern/data/default-user" });
  const format = el("select", { id: "i-format" }, el("option", { value: "", text: t("formatAuto") }),
    ...IMPORT_FORMATS.map((f) => el("option", { value: f, text: f })));
  const space = el("input", { type: "text", id: "i-space", spellcheck: "false" });
  const out = el("section", { "aria-live": "polite" });
  let previewed = null; // the request the shown preview answered: only that one is imported
  const ask = () => ({ path: where.value.trim(), format: format.value, space: space.value.trim() });
  const confirm = el("button", { type: "button", id: "i-confirm", hidden: "", text: t("importNow"), onclick: run(async () => {
    confirm.disabled = true;
    const rep = await api("POST", "/v1/ui/import", { ...previewed, dry_run: false }); // its digest: what was shown, or 409
    previewed = null; confirm.hidden = true; confirm.disabled = false;
    out.replaceChildren(el("h2", { text: t("imported") }), ...importReport(rep));
    notice(t("imported"));
  }) });
  const preview = run(async () => {
    const wanted = ask();
    const rep = await api("POST", "/v1/ui/import", { ...wanted, dry_run: true });
    previewed = rep.added > 0 ? { ...wanted, digest: rep.digest } : null;
    confirm.hidden = previewed === null;
    out.replaceChildren(el("h2", { text: t("previewTitle") }), ...importReport(rep));
  });
  for (const input of [where, format, space]) {
    input.addEventListener("input", () => { previewed = null; confirm.hidden = true; }); // a changed ask needs a new preview
  }
  root.append(el("p", { class: "meta", text: t("importHelp") }),
    el("form", { onsubmit: preview }, field(t("path"), where, true), field(t("format"), format), field(t("spaceOpt"), space),
      el("button", { type: "submit", text: t("previewImport") })), out, confirm);
  where.focus();
}
