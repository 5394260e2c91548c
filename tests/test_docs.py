"""The README, CONTRIBUTING.md, bench/log.md and docs/ point at files that exist: a link moved with its text must be made relative again."""

from __future__ import annotations

import re

from conftest import KIT_ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(page):
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z+.-]*:", target) or target.startswith("#"):
            continue  # a web address, mailto:, or a place in the same page
        yield target


def test_every_relative_link_in_the_readme_and_docs_names_a_file_that_exists():
    pages = [KIT_ROOT / "README.md", KIT_ROOT / "CONTRIBUTING.md", KIT_ROOT / "bench" / "log.md"]
    pages += sorted((KIT_ROOT / "docs").glob("*.md"))
    assert all(page.exists() for page in pages) and len(pages) > 10
    checked, broken = 0, []
    for page in pages:
        for target in _relative_links(page):
            checked += 1
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(KIT_ROOT)}: {target}")
    assert checked > 30  # the pattern finds the links there are (42 when written)
    assert broken == []


def test_a_link_written_from_the_kit_root_inside_docs_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See [the memo](docs/memo.md), [a site](https://example.org) and [below](#below).\n")
    assert list(_relative_links(page)) == ["docs/memo.md"]
    assert not (page.parent / "docs/memo.md").exists()
