"""The docs site builds with warnings as errors, and every internal link and anchor resolves.

``mkdocs build --strict`` fails on a link to a missing page or a missing anchor (mkdocs.yml's
``validation:`` settings make those warnings). The built HTML is then checked again here, link by
link, so a link MkDocs does not validate (one written as raw HTML, a theme's) is caught too.
README.md is not part of the site: its relative links are checked against the checkout, and its
anchors against the headings (or, for docs/ pages, the built site's ids).
"""
from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_site_links(site: Path) -> list[str]:
    """'page: href (why)' for each internal link of the built site that does not resolve."""
    pages = {p.resolve(): _parse(p) for p in site.rglob("*.html")}
    broken = []
    for path, page in sorted(pages.items()):
        if path.name == "404.html":  # served from any depth, so its links are absolute by design
            continue
        for href in page.hrefs:
            parts = urlsplit(href)
            if parts.scheme or href.startswith("//"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site.resolve())}: {href}"
            if not target.exists():
                broken.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no such anchor)")
    return broken


def heading_ids(markdown: str) -> set[str]:
    """The ids MkDocs' toc extension gives the headings of a markdown text (outside code)."""
    from markdown.extensions.toc import slugify

    ids, seen, fenced = set(), {}, False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            text = re.sub(r"`([^`]*)`", r"\1", m.group(1))
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
            slug = slugify(text, "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            ids.add(slug if n == 0 else f"{slug}_{n}")
    return ids


def markdown_links(markdown: str) -> list[str]:
    """Link targets of a markdown text, leaving out code blocks and code spans."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def broken_readme_links(readme: Path, root: Path, site: Path | None) -> list[str]:
    """'href (why)' for each relative link of README.md that does not resolve in the checkout."""
    broken = []
    text = readme.read_text(encoding="utf-8")
    for href in markdown_links(text):
        parts = urlsplit(href)
        if parts.scheme or href.startswith("//"):
            continue
        target = (readme.parent / unquote(parts.path)).resolve() if parts.path else readme
        if not target.exists():
            broken.append(f"{href} (no such file)")
            continue
        if not parts.fragment:
            continue
        rel = target.relative_to(root.resolve()) if target.is_relative_to(root.resolve()) else None
        if site is not None and rel is not None and rel.parts[0] == "docs" and rel.suffix == ".md":
            ids = _parse(site / rel.relative_to("docs").with_suffix(".html")).ids
        elif target.suffix == ".md":
            ids = heading_ids(target.read_text(encoding="utf-8"))
        else:
            continue
        if parts.fragment not in ids:
            broken.append(f"{href} (no such anchor)")
    return broken


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    # no --quiet: it hides the warnings from --strict too, and the build then passes
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                        "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stdout}{r.stderr}"
    return out


def test_site_builds_strict_and_its_links_resolve(site):
    assert (site / "index.html").is_file()
    assert broken_site_links(site) == []


def test_readme_links_resolve(site):
    assert broken_readme_links(ROOT / "README.md", ROOT, site) == []


def test_every_page_is_in_the_nav():
    # a page left out of the nav is unreachable from the site's menus (mkdocs only logs it at INFO)
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(entries):
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from (pages(value) if isinstance(value, list) else [value])

    in_nav = set(pages(config["nav"]))
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk - in_nav == set()
    assert in_nav - on_disk == set()


def test_the_checks_catch_a_broken_link_and_a_broken_anchor(tmp_path):
    site = tmp_path / "site"
    (site / "sub").mkdir(parents=True)
    (site / "a.html").write_text('<h1 id="top">A</h1><a href="sub/b.html#there">b</a>'
                                 '<a href="sub/b.html#gone">b</a><a href="missing.html">m</a>'
                                 '<a href="#top">top</a><a href="https://example.org/x">x</a>')
    (site / "sub" / "b.html").write_text('<h2 id="there">B</h2><a href="../a.html#top">a</a>')
    assert broken_site_links(site) == ["a.html: sub/b.html#gone (no such anchor)",
                                       "a.html: missing.html (no such file)"]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## Two words\n")
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\n[ok](docs/page.md#two-words) [bad](docs/page.md#three)\n"
                      "[gone](docs/nothing.md) [self](#title) `[code](not/checked.md)`\n"
                      "```\n[fenced](not/checked.md)\n```\n[web](https://example.org)\n")
    assert broken_readme_links(readme, tmp_path, None) == ["docs/page.md#three (no such anchor)",
                                                           "docs/nothing.md (no such file)"]
