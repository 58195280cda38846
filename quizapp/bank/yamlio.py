"""Safe YAML reading with a line and column for every node.

Only PyYAML's *composer* runs on the text (it builds a node graph and never constructs Python
objects); this module then builds plain data (dict, list, str, int, float, bool, None, datetime)
from the nodes itself, so that:

- no tag outside YAML's core schema is accepted: ``!!python/...`` is reported, nothing is executed;
- a key written twice in one mapping is an error naming the key, at the line of the second one
  (YAML 1.2 requires unique keys; PyYAML silently keeps the last);
- tabs in indentation are reported as such, at their line (YAML forbids them);
- alias expansion is bounded: a "billion laughs" file (nested anchors and aliases) fails fast with
  a clear message once it would expand past ``MAX_NODES`` nodes, without allocating them;
- an empty file (or one holding only comments) is reported as empty.

Every container built here remembers where each of its entries came from (``Located``), which the
schema layer uses to map a pydantic error location back to ``file:line:column``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: Largest number of nodes a document may expand to (aliases counted at each use).
#: An exercise file has a few hundred at most; the alias bomb in ../shared/cases expands to 43M.
MAX_NODES = 50_000
#: Largest accepted file, in characters (an exercise file is a few kilobytes).
MAX_CHARS = 1_000_000

_SAFE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


class BankError(Exception):
    """A problem with an exercise or quiz file, located for an editor.

    ``file`` is the path as given (or the exercise id for a stored source); ``line`` and
    ``column`` are 1-based, or ``None`` when the problem concerns the file as a whole (e.g. an
    empty file).  ``str(err)`` is ``file:line:column: message`` (the format of compilers and
    linters, which editors turn into links); without a line it is ``file: message``.
    ``errors`` lists every problem found in the same file (this one first) when a loader that
    raises reports several.
    """

    def __init__(self, file: str, line: int | None, column: int | None, message: str) -> None:
        super().__init__(message)
        self.file = str(file)
        self.line = line
        self.column = column
        self.message = message
        self.errors: list[BankError] = [self]

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}:{self.column or 1}: {self.message}"

    def __repr__(self) -> str:
        return f"BankError({str(self)!r})"

    def __reduce__(self) -> tuple[type[BankError], tuple[str, int | None, int | None, str]]:
        # Pickled by its fields (a worker process of ``quizapp sync`` returns it), not by the
        # exception's one argument; ``errors`` is this problem alone again.
        return BankError, (self.file, self.line, self.column, self.message)

    def sort_key(self) -> tuple[str, int, int]:
        return (self.file, self.line or 0, self.column or 0)


@dataclass(frozen=True)
class Mark:
    """A 1-based position in a file."""

    line: int
    column: int


@dataclass
class Located:
    """Where the parts of one YAML container came from.

    ``start``: the container's own position; ``keys[k]``/``values[k]``: for a mapping, the
    positions of key ``k`` and of its value; ``items[i]``: for a sequence, item ``i``;
    ``children``: the ``Located`` of nested containers by key or index; ``styles``: the scalar
    style of string values (``|``, ``>``, quotes or ``None`` for plain), used to place lines
    inside block scalars.
    """

    start: Mark
    keys: dict[Any, Mark] = field(default_factory=dict)
    values: dict[Any, Mark] = field(default_factory=dict)
    children: dict[Any, Located] = field(default_factory=dict)
    styles: dict[Any, str | None] = field(default_factory=dict)

    def find(self, loc: tuple[Any, ...]) -> tuple[Mark, bool]:
        """The position of the deepest part of ``loc`` (a pydantic error location) that exists.

        Returns the mark and whether ``loc`` was found completely.
        """
        here: Located = self
        mark = self.start
        for i, part in enumerate(loc):
            if part in here.values:
                mark = here.values[part]
                if part in here.children:
                    here = here.children[part]
                    continue
                return mark, i == len(loc) - 1
            return mark, False
        return mark, True

    def key_mark(self, loc: tuple[Any, ...]) -> Mark | None:
        """The position of the key at the end of ``loc`` (for "unknown key" errors)."""
        here: Located = self
        for part in loc[:-1]:
            if part not in here.children:
                return None
            here = here.children[part]
        return here.keys.get(loc[-1]) if loc else None


#: Marks are immutable (frozen), so one instance per position serves every file: a cache hit is
#: several times cheaper than a frozen dataclass's ``__init__`` (tens of thousands per bank).
_mark_at = lru_cache(maxsize=1 << 16)(Mark)


def _mark(node: Node) -> Mark:
    start = node.start_mark
    return _mark_at(start.line + 1, start.column + 1)


_LEADING_TAB = re.compile(r"^[ ]*\t")


_STR_TAG = "tag:yaml.org,2002:str"
#: One constructor for every file: its scalar methods keep no state (``construct_object``, which
#: caches per node, is only used for the odd scalar tagged ``!!map``/``!!seq``, to raise its error).
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_SCALAR_CONSTRUCTORS = {
    tag: _CONSTRUCTOR.yaml_constructors[tag]
    for tag in (
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:null",
        "tag:yaml.org,2002:timestamp",
    )
}


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.count = 0
        self.open: set[int] = set()  # collections being built (to find recursive aliases)
        self.built: set[int] = set()  # collections built so far (a second visit is an alias)
        self.aliased = False

    def error(self, node: Node, message: str) -> BankError:
        m = _mark(node)
        return BankError(self.file, m.line, m.column, message)

    def too_many(self, node: Node) -> BankError:
        if self.aliased:
            return self.error(
                node,
                f"the YAML expands to more than {MAX_NODES:,} values through anchors and aliases "
                "(a 'billion laughs' file?); write the data out instead of nesting aliases",
            )
        return self.error(
            node,
            f"the file has more than {MAX_NODES:,} YAML values (keys and list items included); "
            "an exercise file has far fewer: is a list much longer than meant?",
        )

    def build(self, node: Node) -> tuple[Any, Located | None]:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.too_many(node)
        tag = node.tag
        if tag not in _SAFE_TAGS:
            if "python" in tag:
                raise self.error(
                    node,
                    f"the python tag {tag.replace('tag:yaml.org,2002:', '!!')} is not allowed: "
                    "exercise files are data, and YAML python tags could run code (nothing was run)",
                )
            raise self.error(node, f"the YAML tag {tag!r} is not allowed here")
        if isinstance(node, ScalarNode):
            if tag == _STR_TAG:
                return node.value, None  # what SafeConstructor.construct_yaml_str returns
            construct = _SCALAR_CONSTRUCTORS.get(tag)
            try:
                if construct is not None:
                    value = construct(_CONSTRUCTOR, node)
                else:  # a scalar tagged !!map or !!seq: PyYAML's own error
                    value = yaml.constructor.SafeConstructor().construct_object(node, deep=True)
            except yaml.YAMLError as exc:
                raise self.error(node, f"bad value {node.value!r}: {exc}") from None
            except (ValueError, KeyError, TypeError, OverflowError):
                # An explicit tag on a value it does not fit (`!!int ten`, `!!bool maybe`,
                # `!!timestamp 2024-13-01`): PyYAML's constructors raise plain Python errors.
                short = tag.replace("tag:yaml.org,2002:", "!!")
                raise self.error(node, f"bad value {node.value!r}: not a valid {short}") from None
            return value, None
        if id(node) in self.open:
            raise self.error(
                node,
                "this anchor is used by an alias inside itself (a recursive alias such as "
                "'&a [*a]'): exercise data must be a tree",
            )
        if id(node) in self.built:
            self.aliased = True
        self.built.add(id(node))
        self.open.add(id(node))
        try:
            return self._build_collection(node)
        finally:
            self.open.discard(id(node))

    def _build_collection(self, node: Node) -> tuple[Any, Located | None]:
        # Scalar styles: libyaml gives "" for plain scalars where the pure-Python composer gives
        # None; both are stored as None.
        build = self.build
        if isinstance(node, SequenceNode):
            loc = Located(_mark(node))
            items: list[Any] = []
            values, children, styles = loc.values, loc.children, loc.styles
            for i, child in enumerate(node.value):
                if child.__class__ is ScalarNode and child.tag == _STR_TAG:
                    # A string item, inline (what build() does for it, without the call).
                    self.count += 1
                    if self.count > MAX_NODES:
                        raise self.too_many(child)
                    items.append(child.value)
                else:
                    value, sub = build(child)
                    items.append(value)
                    if sub is not None:
                        children[i] = sub
                values[i] = _mark(child)
                if isinstance(child, ScalarNode):
                    styles[i] = child.style or None
            return items, loc
        if isinstance(node, MappingNode):
            loc = Located(_mark(node))
            mapping: dict[Any, Any] = {}
            keys, values, children, styles = loc.keys, loc.values, loc.children, loc.styles
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise self.error(key_node, "YAML merge keys ('<<') are not supported")
                key, _ = build(key_node)
                if isinstance(key, (list, dict)):
                    raise self.error(key_node, "a mapping key must be a plain value")
                if key in mapping:
                    first = keys[key]
                    raise self.error(
                        key_node, f"duplicate key {key!r} (first given at line {first.line})"
                    )
                if value_node.__class__ is ScalarNode and value_node.tag == _STR_TAG:
                    # A string value, inline (what build() does for it, without the call).
                    self.count += 1
                    if self.count > MAX_NODES:
                        raise self.too_many(value_node)
                    mapping[key] = value_node.value
                else:
                    value, sub = build(value_node)
                    mapping[key] = value
                    if sub is not None:
                        children[key] = sub
                keys[key] = _mark(key_node)
                values[key] = _mark(value_node)
                if isinstance(value_node, ScalarNode):
                    styles[key] = value_node.style or None
            return mapping, loc
        raise self.error(node, "unsupported YAML node")  # pragma: no cover


#: Characters YAML 1.1 does not allow in a stream (PyYAML's reader rejects them without a line).
_NON_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def read_text(path: Path, file: str) -> str:
    """A bank file's text as UTF-8.  Raises ``BankError`` at the line and column of the first
    byte that is not UTF-8 (e.g. a Latin-1 ``é``), or when the file cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BankError(file, None, None, f"cannot read the file: {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        start = before.rfind(b"\n") + 1
        column = len(data[start : exc.start].decode("utf-8", errors="replace")) + 1
        raise BankError(
            file,
            line,
            column,
            f"the byte 0x{data[exc.start]:02x} is not UTF-8: save the file as UTF-8 "
            "(it may be Latin-1 or Windows-1252)",
        ) from None


#: libyaml's composer (PyYAML's C extension, same node graph and marks, ~10x faster) when built.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def _compose_fast(text: str, *, plain_style_none: bool = True) -> list[Any] | None:
    """The documents' node graphs composed by libyaml, or None when libyaml is absent or the text
    does not compose (the pure-Python composer then runs, so error messages stay the same).

    libyaml marks a plain scalar's style ``""`` where the pure-Python composer gives ``None``;
    with ``plain_style_none`` (the default) the nodes are rewritten to ``None`` so both graphs are
    the same.  ``parse_yaml`` passes False: its builder reads ``""`` and ``None`` alike."""
    if _FAST_LOADER is None:
        return None
    try:
        docs = list(yaml.compose_all(text, Loader=_FAST_LOADER))
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    if not plain_style_none:
        return docs
    stack, seen = list(docs), set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if node.style == "":
                node.style = None
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
    return docs


def parse_yaml(text: str, file: str) -> tuple[Any, Located]:
    """Parse one YAML document safely.

    Returns the data (plain Python values) and its ``Located`` positions.  Raises ``BankError``
    (with line and column where known) for YAML syntax errors, tabs in indentation, tags beyond
    YAML's core schema (e.g. ``!!python/object``), duplicate keys, anchor/alias expansion past
    ``MAX_NODES``, several documents in one file, and empty files.
    """
    if len(text) > MAX_CHARS:
        raise BankError(file, None, None, f"file is larger than {MAX_CHARS} characters")
    bad = _NON_PRINTABLE.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        char = bad.group(0)
        what = "a NUL byte" if char == "\0" else f"the control character U+{ord(char):04X}"
        raise BankError(
            file,
            line,
            column,
            f"{what} is not allowed in a YAML file (is it a binary or UTF-16 file?)",
        )
    if not text.strip() or all(
        not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()
    ):
        raise BankError(file, None, None, "the file is empty (expected a YAML mapping of fields)")
    try:
        docs = _compose_fast(text, plain_style_none=False)
        if docs is None:
            docs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(text, file, exc) from None
    except yaml.YAMLError as exc:  # pragma: no cover - PyYAML marks all its parse errors
        raise BankError(file, None, None, f"YAML error: {exc}") from None
    except RecursionError:
        raise BankError(file, None, None, "the YAML is nested too deeply") from None
    docs = [d for d in docs if d is not None]
    if not docs:
        raise BankError(file, None, None, "the file is empty (expected a YAML mapping of fields)")
    if len(docs) > 1:
        m = _mark(docs[1])
        raise BankError(file, m.line, m.column, "a file holds one YAML document, found several")
    builder = _Builder(file)
    try:
        data, loc = builder.build(docs[0])
    except RecursionError:
        raise BankError(file, None, None, "the YAML is nested too deeply") from None
    return data, loc or Located(_mark(docs[0]))


def _syntax_error(text: str, file: str, exc: yaml.MarkedYAMLError) -> BankError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else None
    lines = text.splitlines()
    # A tab in indentation makes PyYAML complain about the tab or, later, about the structure;
    # name the tab at its own line when one occurs at or before the failing line.
    for i, raw in enumerate(lines[: line or len(lines)], start=1):
        if _LEADING_TAB.match(raw):
            col = raw.index("\t") + 1
            return BankError(
                file, i, col, "tab character in indentation: YAML indents with spaces only"
            )
    problem = exc.problem or str(exc)
    context = f" ({exc.context})" if exc.context else ""
    return BankError(
        file, line, (mark.column + 1) if mark else None, f"YAML syntax error: {problem}{context}"
    )
