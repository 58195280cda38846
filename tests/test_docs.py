"""The documentation is true: README.md (the front page) and every page of docs/.

- Every ``console`` block is run: each ``$ quizapp ...`` line is invoked and its output must be
  exactly the lines shown under it.  A block runs in a fresh folder holding the files the page
  showed before it (code blocks marked ``<!-- docs-test: file PATH -->``); a block marked
  ``<!-- docs-test: setup NAME -->`` first runs :data:`SETUPS` [NAME] there.  A block whose
  scenario needs a database is marked ``<!-- docs-test: checked-by tests/test_x.py -->``: that
  test module must exist and read the page (it runs the block itself).
- Every ``quizapp`` command written anywhere in the docs (code blocks and inline code) names a
  real command and real options.
- Every relative link resolves (file, and heading anchor where given); every docs page is linked
  from the README; the README stays a front page (under 5 KB, the two commands, a screenshot).

The JSON API page's ``curl`` examples are run by ``tests/test_docs_api.py``; the course map is
checked by ``tests/test_docs_course.py``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from quizapp.cli import main

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]

#: A fenced code block, optionally preceded by a ``<!-- docs-test: ... -->`` line; the fence may
#: be indented (inside a list item).
_BLOCK = re.compile(
    r"^(?:[ ]*<!-- docs-test: (?P<directive>[^>]*?) -->\n)?"
    r"(?P<indent>[ ]*)```(?P<lang>[\w-]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$",
    re.M | re.S,
)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    lang: str
    body: str
    directive: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of ``page``, in order (bodies dedented by their fence's indent)."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        indent = len(m["indent"])
        body = "".join(line[indent:] for line in m["body"].splitlines(keepends=True))
        line = text.count("\n", 0, m.start("indent")) + 1
        out.append(Block(page, line, m["lang"], body, (m["directive"] or "").strip()))
    return out


def _four_mistakes(root: Path) -> None:
    """docs/authoring.md: the example exercise with the four mistakes the page lists."""
    path = root / "exercises" / "my-quiz" / "attention-weights.yaml"
    text = path.read_text()
    for old, new in (
        ("points: 10", "pionts: 10"),
        ("K: {matrix: [n, 2], integers: [-2, 2]}", "K: {matrix: [n, 2], integers: [2, -2]}"),
        ("answer: softmax(Q @ K.T / sqrt(2))", "answer: softmax(Q @ K.T / sqrt(2)).__class__"),
        ("Two queries and {{ n }} keys", "Two queries and {{ m }} keys"),
    ):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text)


#: What a ``<!-- docs-test: setup NAME -->`` block needs done in its folder first.
SETUPS: dict[str, Callable[[Path], None]] = {"four-mistakes": _four_mistakes}


def console_blocks() -> list[Block]:
    """The console blocks this module runs (those checked by another test module aside)."""
    return [
        b
        for page in PAGES
        for b in blocks(page)
        if b.lang == "console" and not b.directive.startswith("checked-by ")
    ]


def test_blocks_checked_elsewhere_are_checked_there() -> None:
    found = 0
    for page in PAGES:
        for b in blocks(page):
            if b.directive.startswith("checked-by "):
                module = REPO / b.directive.removeprefix("checked-by ").strip()
                assert b.lang == "console" and module.is_file(), b.id
                assert page.name in module.read_text(encoding="utf-8"), (b.id, module)
                found += 1
    assert found >= 1


def _commands(body: str) -> list[tuple[str, str]]:
    """(command line, expected output) pairs of a console block."""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            assert out, f"output before the first '$ ' command: {line!r}"
            out[-1][1].append(line)
    return [(cmd, "".join(x + "\n" for x in lines)) for cmd, lines in out]


def _prepare(block: Block, folder: Path) -> None:
    for earlier in blocks(block.page):
        if earlier.line >= block.line:
            break
        kind, _, arg = earlier.directive.partition(" ")
        if kind == "file":
            path = folder / arg.strip()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(earlier.body, encoding="utf-8")
    kind, _, arg = block.directive.partition(" ")
    if kind == "setup":
        SETUPS[arg.strip()](folder)
    else:
        assert kind in ("", "file"), f"unknown docs-test directive {block.directive!r}"


@pytest.mark.parametrize("block", console_blocks(), ids=lambda b: b.id)
def test_console_block_runs_as_shown(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("DATABASE_URL", "QUIZAPP_EXERCISES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    _prepare(block, tmp_path)
    commands = _commands(block.body)
    assert commands, f"{block.id}: a console block without a '$ ' command"
    for command, expected in commands:
        args = shlex.split(command, comments=True)
        assert args[0] == "quizapp", f"{block.id}: only quizapp commands are run: {command}"
        result = CliRunner().invoke(main, args[1:])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
        assert result.output == expected, f"{block.id}: $ {command}"


def test_every_console_block_is_found() -> None:
    """The examples the docs rely on are among the blocks run above."""
    commands = {cmd for b in console_blocks() for cmd, _ in _commands(b.body)}
    assert "quizapp preview my-quiz/attention-weights --seed 3" in commands
    assert "quizapp check exercises/my-quiz --seeds 200" in commands
    assert any(c.startswith("quizapp grade --expected") for c in commands)


# ---------------------------------------------------------------------------------------------
# Every quizapp command named in the docs exists, with the options written


#: Inline code that is a command: ``quizapp`` and a command name.
_INLINE = re.compile(r"`(quizapp [a-z][a-z-]*(?: [^`]*)?)`")


def _written_commands() -> list[tuple[str, str]]:
    """(where, command text) of every ``quizapp ...`` command in the docs."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        code_lines = [
            (b, line)
            for b in blocks(page)
            if b.lang in ("bash", "sh", "console", "")
            for line in b.body.replace("\\\n", " ").splitlines()
        ]
        for b, line in code_lines:
            line = line[2:] if b.lang == "console" and line.startswith("$ ") else line
            for part in re.split(r"&&|\||;|\$\(", line):
                part = part.strip()
                if part.startswith("quizapp "):
                    found.append((b.id, part))
        for m in _INLINE.finditer(text):
            found.append((f"{page.relative_to(REPO)} (inline)", m[1]))
    return found


def _check_command(text: str) -> str | None:
    """Why ``text`` is not a valid quizapp command line, or None."""
    try:
        args = shlex.split(text, comments=True)
    except ValueError:
        args = text.split()
    command: click.Command = main
    i = 1
    while isinstance(command, click.Group) and i < len(args) and args[i] in command.commands:
        command = command.commands[args[i]]
        i += 1
    if isinstance(command, click.Group):
        if i == len(args):
            return None  # the group itself ("quizapp db")
        rest = args[i]
        if rest in ("--help", "--version"):
            return None
        return f"no command {rest!r} in {command.name!r}"
    options = {"--help"}
    for param in command.params:
        options.update(getattr(param, "opts", []))
        options.update(getattr(param, "secondary_opts", []))
    for arg in args[i:]:
        arg = arg.strip("[]")
        if arg.startswith("-") and not re.fullmatch(r"-\d.*", arg):
            name = arg.split("=", 1)[0]
            if name not in options:
                return f"{command.name} has no option {name} (it has {sorted(options)})"
    return None


def test_every_quizapp_command_in_the_docs_exists() -> None:
    written = _written_commands()
    problems = [
        f"{where}: {text}: {why}" for where, text in written if (why := _check_command(text))
    ]
    assert problems == []
    assert len(written) > 30


# ---------------------------------------------------------------------------------------------
# Links, the front page


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(m[1]) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for m in _LINK.finditer(text):
        target = m[1] or m[2]
        if re.match(r"[a-z]+:", target):
            continue
        path_part, _, anchor = target.partition("#")
        path = (page.parent / path_part).resolve() if path_part else page
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(target)
    assert broken == []


README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_a_front_page() -> None:
    assert len(README.encode()) < 5000
    assert README.count("\n## ") <= 6


def test_the_readme_shows_the_two_commands_exactly() -> None:
    """The two commands of a fresh machine: serve the app, and run the tests (``.ci/run`` runs
    the second; ``.ci/wheel_smoke.py`` and tests/test_cli_server.py the first's serve)."""
    code = [b.body for b in blocks(REPO / "README.md") if b.lang == "bash"]
    assert code[:2] == [
        "pip install -e . && quizapp serve\n",
        "pip install -e '.[test]' && pytest\n",
    ]


def test_the_readme_links_every_docs_page_and_shows_a_screenshot() -> None:
    linked = {m[1] for m in re.finditer(r"\]\((docs/[^)#\s]+)", README)}
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert pages - linked == set(), "link every docs page from the README"
    images = re.findall(r"!\[[^\]]+\]\((docs/[^)\s]+\.png)\)", README)
    assert images, "the README shows a screenshot"
    data = (REPO / images[0]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and 30_000 < len(data) < 400_000
