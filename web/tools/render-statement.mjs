// Build step: the statement's Markdown to HTML, with its math rendered by KaTeX, so the page
// ships finished HTML (and KaTeX's stylesheet) instead of a Markdown and math engine.
//
// usage: node render-statement.mjs statement.md   (the HTML on stdout)
import { readFileSync } from "node:fs";
import katex from "katex";
import { marked } from "marked";

const source = readFileSync(process.argv[2], "utf8");
const math = [];
// Take the math out before Markdown sees it: `_`, `*` and `\` mean other things there.
const text = source
  .replace(/\$\$([\s\S]+?)\$\$/g, (_, tex) => stash(tex, true))
  .replace(/\$([^$\n]+?)\$/g, (_, tex) => stash(tex, false));

function stash(tex, displayMode) {
  math.push(katex.renderToString(tex.trim(), { displayMode, throwOnError: true, output: "htmlAndMathml" }));
  return `KATEXMATH${math.length - 1}X`;
}

const html = marked
  .parse(text, { gfm: true })
  .replace(/KATEXMATH(\d+)X/g, (_, i) => math[Number(i)])
  // The page's header already carries the title as its one h1.
  .replace(/^\s*<h1[^>]*>[\s\S]*?<\/h1>\s*/, "");
process.stdout.write(html);
