// The reference's breakdown of one example as an SVG picture: the reference sentence above the
// candidate, a line from each matched candidate word to the reference word it used, each chunk
// in a box, and P, R, Fmean, Pen and the score below. The figures were computed at build time.

const CHAR = 8.6; // width of one character of the 14px monospace font
const PAD = 9;
const GAP = 10;
const LEFT = 96;
const REF_Y = 34;
const CAND_Y = 150;
const BOX_H = 28;
const PALETTE = ["#1d4ed8", "#be185d", "#047857", "#b45309", "#6d28d9", "#0e7490", "#b91c1c", "#3f6212"]; // each at least 4.5:1 on white

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

const fmt = (x) => (Number.isInteger(x) ? String(x) : String(Number(x.toFixed(4))));

function layout(tokens) {
  let x = LEFT;
  return tokens.map((word) => {
    const width = Math.max(word.length * CHAR + 2 * PAD, 28);
    const box = { word, x, width, center: x + width / 2 };
    x += width + GAP;
    return box;
  });
}

export function breakdownSvg(example, defaults) {
  const ref = layout(example.referenceTokens);
  const cand = layout(example.candidateTokens);
  const chunkOf = new Map();
  example.chunks.forEach(([start, end], k) => {
    for (let i = start; i < end; i++) chunkOf.set(i, k);
  });
  const usedBy = new Map(example.links.map(([c, r]) => [r, c]));
  const color = (k) => PALETTE[k % PALETTE.length];
  const rowEnd = (row) => (row.length ? row[row.length - 1].x + row[row.length - 1].width : LEFT);
  const width = Math.max(rowEnd(ref), rowEnd(cand), 560) + 16;
  const height = CAND_Y + BOX_H + 112;
  const parts = [];

  const token = (box, y, k) => {
    const matched = k !== undefined;
    const stroke = matched ? color(k) : "#94a3b8";
    const fill = matched ? `${color(k)}1f` : "#f8fafc";
    const ink = matched ? "#0f172a" : "#475569";
    parts.push(
      `<g class="${matched ? "matched" : "unmatched"}"><rect x="${box.x}" y="${y}" width="${box.width}" height="${BOX_H}" rx="6" fill="${fill}" stroke="${stroke}" stroke-width="${matched ? 1.6 : 1}"/>`,
      `<text x="${box.center}" y="${y + 19}" text-anchor="middle" fill="${ink}"${matched ? ' font-weight="600"' : ""}>${escape(box.word)}</text></g>`,
    );
  };

  parts.push(`<text class="label" x="8" y="${REF_Y + 19}">reference</text>`);
  parts.push(`<text class="label" x="8" y="${CAND_Y + 19}">candidate</text>`);
  // Links first, so the word boxes are drawn over their ends.
  for (const [c, r] of example.links) {
    const k = chunkOf.get(c);
    parts.push(
      `<line x1="${cand[c].center}" y1="${CAND_Y - 6}" x2="${ref[r].center}" y2="${REF_Y + BOX_H}" stroke="${color(k)}" stroke-width="1.8" stroke-opacity="0.75"/>`,
    );
  }
  example.chunks.forEach(([start, end], k) => {
    const x = cand[start].x - 5;
    const w = cand[end - 1].x + cand[end - 1].width - cand[start].x + 10;
    parts.push(
      `<rect class="chunk" x="${x}" y="${CAND_Y - 6}" width="${w}" height="${BOX_H + 12}" rx="9" fill="none" stroke="${color(k)}" stroke-width="1.5" stroke-dasharray="5 3"/>`,
      `<text class="chunk-label" x="${x + w / 2}" y="${CAND_Y + BOX_H + 22}" text-anchor="middle" fill="${color(k)}">chunk ${k + 1}</text>`,
    );
  });
  ref.forEach((box, i) => token(box, REF_Y, usedBy.has(i) ? chunkOf.get(usedBy.get(i)) : undefined));
  cand.forEach((box, i) => token(box, CAND_Y, chunkOf.get(i)));

  const e = example;
  const c = e.candidateTokens.length;
  const r = e.referenceTokens.length;
  const p = { ...defaults, ...e.params };
  const counts = `m = ${e.m} matched of |c| = ${c} candidate and |r| = ${r} reference words; ${e.chunks.length} chunk${e.chunks.length === 1 ? "" : "s"}`;
  const figures = [
    ["P", e.m && c ? `${e.m}/${c} = ${fmt(e.P)}` : "0"],
    ["R", e.m && r ? `${e.m}/${r} = ${fmt(e.R)}` : "0"],
    ["Fmean", fmt(e.Fmean)],
    ["Pen", e.m ? `${fmt(p.gamma)}·(${e.chunks.length}/${e.m})^${fmt(p.beta)} = ${fmt(e.Pen)}` : "0"],
    ["score", String(e.score)],
  ];
  const y0 = CAND_Y + BOX_H + 52;
  parts.push(`<text class="counts" x="8" y="${y0}">${escape(counts)}</text>`);
  let x = 8;
  const spans = figures.map(([name, value]) => {
    const text = `<tspan class="figure-name">${name}</tspan> = ${escape(value)}`;
    const at = x;
    x += (name.length + value.length + 3) * CHAR + 22;
    return `<text class="figure${name === "score" ? " score" : ""}" x="${at}" y="${y0 + 30}">${text}</text>`;
  });
  parts.push(...spans);
  const total = Math.max(width, x + 8);
  return (
    `<svg data-testid="breakdown" class="breakdown" viewBox="0 0 ${total} ${height}" width="${total}" height="${height}" ` +
    `role="img" aria-label="${escape(`breakdown of ${e.title}: score ${e.score}`)}" xmlns="http://www.w3.org/2000/svg">` +
    `<style>text{font:14px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}.label,.counts{font:13px system-ui,sans-serif;fill:#475569}` +
    `.chunk-label{font:12px system-ui,sans-serif}.figure{font-size:14px;fill:#0f172a}.figure-name{font-weight:700}.score{fill:#1d4ed8;font-weight:700}</style>` +
    parts.join("") +
    `</svg>`
  );
}
