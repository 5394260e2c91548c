// Build step: compile the standard library and the test wheels to bytecode *inside* Pyodide
// (the host's Python makes bytecode for the wrong version), and prebuild hypothesis's
// unicode cache. A cold page then skips compiling ~10 MB of Python and building that table.
//
// usage: node precompile.mjs WHEELS_DIR OUT_DIR
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadPyodide } from "pyodide";

const [wheelsDir, outDir] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });

const pyodide = await loadPyodide({ stdout: (s) => console.log(s), stderr: (s) => console.error(s) });
pyodide.FS.mkdirTree("/build/wheels");
for (const name of readdirSync(wheelsDir).filter((n) => n.endsWith(".whl"))) {
  pyodide.FS.writeFile(`/build/wheels/${name}`, readFileSync(join(wheelsDir, name)));
}

pyodide.runPython(`
import compileall, os, shutil, sys, zipfile
from pathlib import Path

def compiled_zip(src: Path, dest: str) -> None:
    """Compile every .py under src to a .pyc beside it, drop the sources, and zip the tree."""
    compileall.compile_dir(str(src), quiet=2, legacy=True, workers=1)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for path in sorted(src.rglob("*")):
            if path.is_dir() or path.suffix == ".py" or "__pycache__" in path.parts:
                continue
            z.write(path, path.relative_to(src).as_posix())

stdlib = Path("/build/stdlib")
with zipfile.ZipFile(f"/lib/python{sys.version_info[0]}{sys.version_info[1]}.zip") as z:
    z.extractall(stdlib)
compiled_zip(stdlib, "/build/stdlib.zip")

site = Path("/build/site")
for wheel in sorted(Path("/build/wheels").glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
compiled_zip(site, "/build/site-packages.zip")

# Hypothesis caches its unicode table on disk; the page's file system starts empty.
os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = "/build/hypothesis"
sys.path.insert(0, "/build/site-packages.zip")
from hypothesis.internal import charmap
charmap.charmap()
charmap.intervals_from_codec("utf-8")
with zipfile.ZipFile("/build/hypothesis-cache.zip", "w", zipfile.ZIP_STORED) as z:
    for path in sorted(Path("/build/hypothesis").rglob("*")):
        if path.is_file():
            z.write(path, path.relative_to("/build/hypothesis").as_posix())
`);

for (const name of ["stdlib.zip", "site-packages.zip", "hypothesis-cache.zip"]) {
  writeFileSync(join(outDir, name), pyodide.FS.readFile(`/build/${name}`));
}
console.log(`precompiled into ${outDir}`);
