"""README.md and docs/ speak to users: every file of the repository they name exists, and they name
nothing outside it (the workplace's design notes and reference pages are not shipped)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "cpp" / "sim" / "README.md"]
TOP = ("cpp", "neuronxsim", "docs", "benchmarks", "tests", "scripts", ".ci")


def named_paths(text: str):
    """(line, path) for each repository path in `code` spans: the tree's top-level folders start
    them; `{a,b}` expands; `<Name>` and `*` are wildcards; what follows a `:` (a line, a kernel
    name, a test id) is not part of the path."""
    word = re.compile(r"(?:^|[\s(\[=])((?:%s)/[^\s`,;)\]]*)" % "|".join(map(re.escape, TOP)))
    for number, line in enumerate(text.splitlines(), 1):
        for span in re.findall(r"`([^`\n]+)`", line):
            parts = re.split(r"\{([^}]*)\}", span)
            choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
            for pick in itertools.product(*choices):
                for path in word.findall("".join(pick)):
                    yield number, re.sub(r"<[^>]*>", "*", path.split(":")[0].rstrip("."))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_files_exist(page):
    missing = []
    for number, path in named_paths(page.read_text()):
        if not (any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()):
            missing.append(f"{page.relative_to(ROOT)}:{number}: {path}")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_outside_the_repository(page):
    outside = [f"{page.relative_to(ROOT)}:{n}: {line.strip()}" for n, line in enumerate(page.read_text().splitlines(), 1)
               if re.search(r"\.\./shared\b|/work/", line)]
    assert not outside, "\n".join(outside)


def test_path_finder():
    text = "`cpp/bir/Hwm.{h,cpp}` and `benchmarks/calibrate.py:31` and (`cpp/walrus/kernels/leaves/<Name>.cpp`)"
    assert [p for _, p in named_paths(text)] == ["cpp/bir/Hwm.h", "cpp/bir/Hwm.cpp", "benchmarks/calibrate.py",
                                                 "cpp/walrus/kernels/leaves/*.cpp"]
