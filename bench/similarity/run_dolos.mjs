// Dolos on every pair of a folder: node run_dolos.mjs FOLDER OUT.json (from a folder with @dodona/dolos-lib installed).
import { Dolos } from "@dodona/dolos-lib";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
const t0 = performance.now();
const folder = process.argv[2];
const files = readdirSync(folder).filter((f) => f.endsWith(".py")).sort().map((f) => path.join(folder, f));
const dolos = new Dolos({ language: "python" });
const report = await dolos.analyzePaths(files);
const out = {};
for (const pair of report.allPairs()) {
  const a = path.basename(pair.leftFile.path), b = path.basename(pair.rightFile.path);
  const [x, y] = a < b ? [a, b] : [b, a];
  out[`${x}|${y}`] = pair.similarity;
}
writeFileSync(process.argv[3], JSON.stringify(out));
console.log(`dolos: ${files.length} files, ${((performance.now() - t0) / 1000).toFixed(2)} s, ${Object.keys(out).length} pairs`);
