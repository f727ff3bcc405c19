#!/usr/bin/env python3
"""Fails when the files of any crate in the workspace import each other in a cycle.

    scripts/check-module-cycles.py [--root DIR] [--graph]
    scripts/check-module-cycles.py --self-test

For every crate (the workspace members of the root Cargo.toml, plus any
directory one level down with its own Cargo.toml, such as the excluded
fuzz/), and every target of it (src/lib.rs, src/main.rs, src/bin/*, tests/*,
examples/*, benches/*, and the [[bin]]/[[test]]/... paths its Cargo.toml
names), the script builds the graph "file A depends on file B" and fails,
printing each cycle's files in order and the lines that make its edges.

What makes an edge A -> B:

- a `use` of a path into the crate: `crate::`, `self::`, `super::`, or a
  child module of the current module (`pub use atomic::AtomicBloomFilter` in
  lib.rs), with `{...}` groups, `self`, globs and `as` expanded;
- the same paths written in code (`crate::cli::check_workload(..)`,
  `$crate::common::union` in a macro), and paths through a module imported
  by name (`use crate::report; report::measure(..)`).

A path resolves to the file of the deepest module it names: `a/b.rs` or
`a/b/mod.rs` (or a `#[path]`), or the file holding the inline module. A path
to an item that a module re-exports (`pub use standard::BloomFilter` in
lib.rs, then `use crate::BloomFilter`) is followed to the module that
defines it, because that is the file the importer actually depends on;
counting it as a dependency on lib.rs would turn every crate-root facade
into a cycle. A re-export of another crate's item (`pub use
filterlab_core::Error`) is no edge in this crate. An item defined in lib.rs
itself is an edge to lib.rs.

What is not an edge: `mod x;` (declaring a child is not importing it), a
path into the same file (inline `mod tests { use super::*; }`), comments,
strings, and paths to other crates. Items brought in by a glob re-export are
attributed to the module holding the glob.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
import tempfile
import tomllib
import unittest
from collections import defaultdict, deque
from dataclasses import dataclass, field

# ---------------------------------------------------------------- lexing


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "punct", "str"
    text: str
    line: int


IDENT_START = re.compile(r"[A-Za-z_$]")
IDENT = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*|r#[A-Za-z_][A-Za-z0-9_]*")
RAW_STRING = re.compile(r'(?:b|c)?r(#*)"')


def tokenize(source: str) -> list[Token]:
    """Identifiers, punctuation and string literals, with comments removed and
    the contents of strings and chars never read as code."""
    tokens: list[Token] = []
    i, line, n = 0, 1, len(source)
    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif source.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if source.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif source.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += source[i] == "\n"
                    i += 1
        elif (m := RAW_STRING.match(source, i)) and (c in "bcr"):
            hashes = m.group(1)
            close = '"' + hashes
            end = source.find(close, m.end())
            end = n if end < 0 else end
            text = source[m.end() : end]
            tokens.append(Token("str", text, line))
            line += text.count("\n")
            i = end + len(close)
        elif c == '"' or (c in "bc" and source.startswith('"', i + 1)):
            start_line = line
            i += 1 if c == '"' else 2
            chars = []
            while i < n and source[i] != '"':
                if source[i] == "\\":
                    chars.append(source[i : i + 2])
                    line += source[i + 1 : i + 2] == "\n"
                    i += 2
                    continue
                line += source[i] == "\n"
                chars.append(source[i])
                i += 1
            tokens.append(Token("str", "".join(chars), start_line))
            i += 1
        elif c == "'" or (c == "b" and source.startswith("'", i + 1)):
            # A char literal ('x', '\n', '\u{..}', b'x') or a lifetime ('a).
            j = i + (2 if c == "b" else 1)
            if source.startswith("\\", j):
                end = source.find("'", j + 2)
                i = n if end < 0 else end + 1
            elif j + 1 < n and source[j + 1] == "'":
                i = j + 2
            else:
                i = j  # a lifetime: its name lexes as an identifier next
        elif IDENT_START.match(c):
            m = IDENT.match(source, i)
            if not m:
                tokens.append(Token("punct", c, line))
                i += 1
                continue
            text = m.group(0)
            if text.startswith("r#"):
                text = text[2:]
            tokens.append(Token("ident", text, line))
            i = m.end()
        elif c.isdigit():
            m = re.compile(r"[0-9][0-9A-Za-z_.]*").match(source, i)
            i = m.end()
        elif source.startswith("::", i):
            tokens.append(Token("punct", "::", line))
            i += 2
        else:
            tokens.append(Token("punct", c, line))
            i += 1
    return tokens


# ---------------------------------------------------------------- parsing


@dataclass
class Reference:
    """A path written in a file, in the module it was written in."""

    module: tuple[str, ...]
    segments: list[str]
    line: int
    text: str


@dataclass
class Import:
    """One leaf of a `use` tree: `name` is bound to `segments` in `module`."""

    module: tuple[str, ...]
    segments: list[str]
    name: str | None  # None for a glob
    line: int
    text: str


@dataclass
class ParsedFile:
    path: str
    module: tuple[str, ...]
    # Child modules declared here: module path -> (file path or None for
    # inline, directory for its own children).
    children: list[tuple[tuple[str, ...], str | None, bool]] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)


PATH_STARTS = {"crate", "$crate", "self", "super"}
KEYWORDS = {
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match",
    "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "trait",
    "true", "type", "unsafe", "use", "where", "while", "Self",
}


def parse_use_tree(tokens: list[Token], i: int, prefix: list[str], out: list[tuple[list[str], str | None]]) -> int:
    """Parses one use tree at tokens[i]; appends (segments, bound name or
    None for a glob) to `out`; returns the index after the tree."""
    segments = list(prefix)
    if i < len(tokens) and tokens[i].text == "::":
        i += 1  # a leading `::` (2015-style absolute path)
    while i < len(tokens):
        tok = tokens[i]
        if tok.text == "{":
            i += 1
            while i < len(tokens) and tokens[i].text != "}":
                i = parse_use_tree(tokens, i, segments, out)
                if i < len(tokens) and tokens[i].text == ",":
                    i += 1
            return i + 1
        if tok.text == "*":
            out.append((segments, None))
            return i + 1
        if tok.kind != "ident":
            return i
        if tok.text == "self" and segments and (i + 1 >= len(tokens) or tokens[i + 1].text != "::"):
            name = segments[-1]
            i += 1
            if i + 1 < len(tokens) and tokens[i].text == "as":
                name = tokens[i + 1].text
                i += 2
            out.append((segments, name))
            return i
        segments = segments + [tok.text]
        i += 1
        if i < len(tokens) and tokens[i].text == "::":
            i += 1
            continue
        name = segments[-1]
        if i + 1 < len(tokens) and tokens[i].text == "as":
            name = tokens[i + 1].text
            i += 2
        out.append((segments, None if name == "_" else name))
        return i
    return i


def parse_file(path: str, module: tuple[str, ...], source: str) -> ParsedFile:
    tokens = tokenize(source)
    parsed = ParsedFile(path, module)
    # (module path, brace depth at which it closes)
    scopes: list[tuple[tuple[str, ...], int]] = [(module, -1)]
    depth = 0
    pending_path: str | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        current = scopes[-1][0]
        if tok.text == "#" and i + 2 < len(tokens) and tokens[i + 1].text == "[":
            # #[path = "file.rs"] before a `mod`; other attributes are skipped.
            if tokens[i + 2].text == "path" and i + 4 < len(tokens) and tokens[i + 4].kind == "str":
                pending_path = tokens[i + 4].text
            j, nesting = i + 1, 0
            while j < len(tokens):
                if tokens[j].text == "[":
                    nesting += 1
                elif tokens[j].text == "]":
                    nesting -= 1
                    if nesting == 0:
                        break
                j += 1
            i = j + 1
            continue
        if tok.text == "{":
            depth += 1
        elif tok.text == "}":
            depth -= 1
            if len(scopes) > 1 and depth == scopes[-1][1]:
                scopes.pop()
        elif tok.kind == "ident" and tok.text == "mod" and i + 2 < len(tokens) and tokens[i + 1].kind == "ident":
            name = tokens[i + 1].text
            child = current + (name,)
            if tokens[i + 2].text == ";":
                parsed.children.append((child, pending_path, False))
                pending_path = None
                i += 3
                continue
            if tokens[i + 2].text == "{":
                parsed.children.append((child, None, True))
                scopes.append((child, depth))
                depth += 1
                pending_path = None
                i += 3
                continue
        elif tok.kind == "ident" and tok.text == "use" and i + 1 < len(tokens) and tokens[i + 1].text != "<":
            leaves: list[tuple[list[str], str | None]] = []
            end = parse_use_tree(tokens, i + 1, [], leaves)
            for segments, name in leaves:
                text = "use " + "::".join(segments) + ("::*" if name is None else "")
                parsed.imports.append(Import(current, segments, name, tok.line, text))
            while end < len(tokens) and tokens[end].text != ";":
                end += 1
            i = end + 1
            continue
        elif (
            tok.kind == "ident"
            and tok.text not in KEYWORDS - PATH_STARTS
            and i + 2 < len(tokens)
            and tokens[i + 1].text == "::"
            and tokens[i + 2].kind == "ident"
            and (i == 0 or tokens[i - 1].text != "::")
        ):
            segments = [tok.text]
            j = i + 1
            while j + 1 < len(tokens) and tokens[j].text == "::" and tokens[j + 1].kind == "ident":
                segments.append(tokens[j + 1].text)
                j += 2
            parsed.references.append(Reference(current, segments, tok.line, "::".join(segments)))
            i = j
            continue
        i += 1
    return parsed


# ---------------------------------------------------------------- crates


@dataclass
class Crate:
    name: str  # e.g. "bloom/src/lib.rs"
    root: str
    files: dict[str, ParsedFile] = field(default_factory=dict)
    module_file: dict[tuple[str, ...], str] = field(default_factory=dict)
    children: dict[tuple[str, ...], set[str]] = field(default_factory=lambda: defaultdict(set))
    imports: dict[tuple[str, ...], list[Import]] = field(default_factory=lambda: defaultdict(list))


def load_crate(root_file: str, display: str) -> Crate:
    crate = Crate(display, root_file)
    # (file, module path, directory holding its children)
    queue = deque([(root_file, (), os.path.dirname(root_file))])
    while queue:
        path, module, children_at = queue.popleft()
        if path in crate.files:
            continue
        with open(path, encoding="utf-8") as f:
            parsed = parse_file(path, module, f.read())
        crate.files[path] = parsed
        crate.module_file[module] = path
        for imp in parsed.imports:
            crate.imports[imp.module].append(imp)
        for child, path_attr, inline in parsed.children:
            crate.children[child[:-1]].add(child[-1])
            nested = child[len(module) : -1]  # inline modules between
            if inline:
                crate.module_file[child] = path
                continue
            if path_attr is not None:
                candidate = os.path.normpath(os.path.join(os.path.dirname(path), *nested, path_attr))
                queue.append((candidate, child, os.path.dirname(candidate) if candidate.endswith("mod.rs") else candidate[:-3]))
                continue
            base = os.path.join(children_at, *nested, child[-1])
            for candidate, sub in ((base + ".rs", base), (os.path.join(base, "mod.rs"), base)):
                if os.path.isfile(candidate):
                    queue.append((candidate, child, sub))
                    break
    return crate


def absolute(crate: Crate, module: tuple[str, ...], segments: list[str], imported: bool = True) -> list[str] | None:
    """`segments` written in `module`, as a path from the crate root; None
    when it leaves the crate."""
    first = segments[0]
    if first in ("crate", "$crate"):
        return list(segments[1:])
    if first == "self":
        return list(module) + list(segments[1:])
    if first == "super":
        base = list(module)
        rest = list(segments)
        while rest and rest[0] == "super":
            if not base:
                return None
            base.pop()
            rest.pop(0)
        return base + rest
    if first in crate.children.get(module, ()):
        return list(module) + list(segments)
    if imported:
        # A name this module imported (`use crate::report;` then
        # `report::measure`), or a child module of an enclosing inline module.
        for imp in crate.imports.get(module, ()):
            if imp.name == first:
                target = absolute(crate, imp.module, imp.segments, imported=False)
                if target is not None:
                    return target + list(segments[1:])
    return None


def resolve(crate: Crate, path: list[str], seen: frozenset = frozenset()) -> str | None:
    """The file a crate-rooted path depends on; None for another crate's item."""
    module: tuple[str, ...] = ()
    i = 0
    while i < len(path) and module + (path[i],) in crate.module_file:
        module = module + (path[i],)
        i += 1
    if i == len(path):
        return crate.module_file.get(module)
    name = path[i]
    key = (module, name)
    if key not in seen:
        for imp in crate.imports.get(module, ()):
            if imp.name == name:
                target = absolute(crate, module, imp.segments, imported=False)
                if target is None:
                    return None  # re-exported from another crate
                return resolve(crate, target + path[i + 1 :], seen | {key})
    return crate.module_file.get(module)


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    text: str


def crate_edges(crate: Crate) -> list[Edge]:
    edges = []
    for path, parsed in crate.files.items():
        items = [(imp.module, imp.segments, imp.line, imp.text) for imp in parsed.imports]
        items += [(ref.module, ref.segments, ref.line, ref.text) for ref in parsed.references]
        for module, segments, line, text in items:
            if not segments:
                continue
            target_path = absolute(crate, module, segments)
            if target_path is None:
                continue
            target = resolve(crate, target_path)
            if target is not None and target != path:
                edges.append(Edge(path, target, line, text))
    return edges


def find_cycles(nodes: list[str], edges: list[Edge]) -> list[tuple[list[str], list[list[str]]]]:
    """The strongly connected components with more than one file (Tarjan),
    each with cycles (files in order, the first repeated at the end) that
    together use every edge inside it."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(1000, 10 * len(nodes) + 100))
    for v in sorted(set(nodes) | set(graph)):
        if v not in index:
            visit(v)
    result = []
    for component in sorted(components):
        members = set(component)

        def shortest_path(source: str, target: str) -> list[str]:
            """Files from source to target inside the component (BFS)."""
            previous = {source: None}
            queue = deque([source])
            while queue:
                v = queue.popleft()
                if v == target:
                    break
                for w in sorted(graph[v] & members):
                    if w not in previous:
                        previous[w] = v
                        queue.append(w)
            path = [target]
            while previous[path[0]] is not None:
                path.insert(0, previous[path[0]])
            return path

        # Cycles until every edge inside the component is on one: each
        # uncovered edge u -> v closed by the shortest path back from v to u.
        cycles: list[list[str]] = []
        covered: set[tuple[str, str]] = set()
        for u in component:
            for v in sorted(graph[u] & members):
                if (u, v) in covered:
                    continue
                cycle = [u] + shortest_path(v, u)
                covered.update(zip(cycle, cycle[1:]))
                cycles.append(cycle)
        result.append((component, cycles))
    return result


# ---------------------------------------------------------------- discovery


def crate_dirs(root: str) -> list[str]:
    dirs = set()
    manifest = os.path.join(root, "Cargo.toml")
    if os.path.isfile(manifest):
        with open(manifest, "rb") as f:
            data = tomllib.load(f)
        if "package" in data:
            dirs.add(root)
        for member in data.get("workspace", {}).get("members", []):
            for path in glob.glob(os.path.join(root, member)):
                if os.path.isfile(os.path.join(path, "Cargo.toml")):
                    dirs.add(os.path.normpath(path))
    # Crates that are not members (fuzz/, excluded) and new ones not yet listed.
    for path in glob.glob(os.path.join(root, "*", "Cargo.toml")):
        dirs.add(os.path.dirname(os.path.normpath(path)))
    return sorted(d for d in dirs if "/target" not in d)


def crate_roots(crate_dir: str) -> list[str]:
    roots = []
    for pattern in (
        "src/lib.rs", "src/main.rs", "src/bin/*.rs", "src/bin/*/main.rs",
        "tests/*.rs", "tests/*/main.rs", "examples/*.rs", "examples/*/main.rs",
        "benches/*.rs", "benches/*/main.rs",
    ):
        roots += glob.glob(os.path.join(crate_dir, pattern))
    manifest = os.path.join(crate_dir, "Cargo.toml")
    if os.path.isfile(manifest):
        with open(manifest, "rb") as f:
            data = tomllib.load(f)
        targets = [data.get("lib", {})]
        for kind in ("bin", "test", "example", "bench"):
            targets += data.get(kind, [])
        for target in targets:
            if "path" in target:
                roots.append(os.path.join(crate_dir, target["path"]))
    return sorted({os.path.normpath(r) for r in roots if os.path.isfile(r)})


def check(root: str, show_graph: bool = False, out=sys.stdout) -> int:
    root = os.path.normpath(root)
    failures = 0
    crates = 0
    for crate_dir in crate_dirs(root):
        for root_file in crate_roots(crate_dir):
            crates += 1
            display = os.path.relpath(root_file, root)
            crate = load_crate(root_file, display)
            edges = crate_edges(crate)
            rel = lambda p: os.path.relpath(p, root)  # noqa: E731
            if show_graph:
                for e in sorted(edges, key=lambda e: (e.source, e.target, e.line)):
                    print(f"{rel(e.source)} -> {rel(e.target)}  ({rel(e.source)}:{e.line} {e.text})", file=out)
            for component, cycles in find_cycles(list(crate.files), edges):
                failures += 1
                print(f"import cycle in the crate rooted at {display}, through {len(component)} files:", file=out)
                for cycle in cycles:
                    print("  " + " -> ".join(rel(p) for p in cycle), file=out)
                pairs = sorted({(a, b) for cycle in cycles for a, b in zip(cycle, cycle[1:])})
                for a, b in pairs:
                    lines = sorted({(e.line, e.text) for e in edges if e.source == a and e.target == b})
                    shown = "; ".join(f"{rel(a)}:{line} {text}" for line, text in lines[:4])
                    more = f" (+{len(lines) - 4} more)" if len(lines) > 4 else ""
                    print(f"    {rel(a)} -> {rel(b)}: {shown}{more}", file=out)
    if failures:
        print(f"module cycles: {failures} group(s) of files in a cycle, in {crates} crate target(s)", file=out)
        return 1
    print(f"module cycles: none in {crates} crate target(s)", file=out)
    return 0


# ---------------------------------------------------------------- self-test


class SelfTest(unittest.TestCase):
    def tree(self, files: dict[str, str]) -> str:
        root = tempfile.mkdtemp(prefix="cycles-")
        self.addCleanup(lambda: __import__("shutil").rmtree(root))
        files = {"Cargo.toml": '[workspace]\nmembers = ["k"]\n', "k/Cargo.toml": '[package]\nname = "k"\n', **files}
        for name, text in files.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return root

    def run_check(self, files: dict[str, str]) -> tuple[int, str]:
        import io

        out = io.StringIO()
        code = check(self.tree(files), out=out)
        return code, out.getvalue()

    def assert_no_cycle(self, files: dict[str, str]) -> None:
        code, out = self.run_check(files)
        self.assertEqual(code, 0, out)

    def assert_cycle(self, files: dict[str, str], *expected: str) -> None:
        """The check fails, and its report holds every `expected` line part."""
        code, out = self.run_check(files)
        self.assertEqual(code, 1, out)
        for text in expected:
            self.assertIn(text, out)

    def test_facade_reexports_and_mod_declarations_are_no_cycle(self):
        self.assert_no_cycle({
            "k/src/lib.rs": "mod a;\nmod b;\npub use a::A;\npub use b::B;\npub use other::Error;\n",
            "k/src/a.rs": "use crate::{B, Error};\npub struct A(B);\n",
            "k/src/b.rs": "use crate::Error;\npub struct B;\n",
        })

    def test_two_file_cycle_through_use(self):
        self.assert_cycle(
            {
                "k/src/lib.rs": "mod a;\nmod b;\n",
                "k/src/a.rs": "use crate::b::B;\npub struct A;\n",
                "k/src/b.rs": "use crate::a::A;\npub struct B;\n",
            },
            "k/src/a.rs -> k/src/b.rs -> k/src/a.rs",
            "k/src/b.rs:1 use crate::a::A",
        )

    def test_cycle_through_a_root_reexport_and_a_code_path(self):
        self.assert_cycle(
            {
                "k/src/lib.rs": "mod a;\nmod b;\nmod c;\npub use b::B;\n",
                "k/src/a.rs": "use crate::B;\n",
                "k/src/b.rs": "pub struct B;\nfn f() { crate::c::g(); }\n",
                "k/src/c.rs": "pub fn g() { let _ = crate::a::X; }\n",
            },
            "k/src/a.rs -> k/src/b.rs -> k/src/c.rs -> k/src/a.rs",
        )

    def test_super_self_mod_rs_and_nested_groups(self):
        files = {
            "k/src/lib.rs": "mod kernel;\npub use kernel::f;\n",
            "k/src/kernel/mod.rs": "mod avx2;\nmod scalar;\npub use self::scalar::f;\n",
            "k/src/kernel/avx2.rs": "use super::{scalar::{self, g as h}};\n",
            "k/src/kernel/scalar.rs": "pub fn f() {}\npub fn g() {}\n",
        }
        self.assert_no_cycle(files)
        files["k/src/kernel/scalar.rs"] += "fn x() { super::avx2::y(); }\n"
        self.assert_cycle(files, "k/src/kernel/avx2.rs -> k/src/kernel/scalar.rs -> k/src/kernel/avx2.rs")

    def test_comments_strings_and_same_file_paths_are_no_edges(self):
        self.assert_no_cycle({
            "k/src/lib.rs": "mod a;\nmod b;\n",
            "k/src/a.rs": (
                "// use crate::b::B;\n/* crate::b::B /* nested */ crate::b */\n"
                'const S: &str = "crate::b::B"; const R: &str = r#"use crate::b::B;"#;\n'
                "const C: char = '\"'; fn l<'a>(x: &'a str) -> &'a str { x }\n"
                "use crate::b::B;\n"
                "#[cfg(test)]\nmod tests { use super::*; use crate::a::l; }\n"
            ),
            "k/src/b.rs": "pub struct B;\n",
        })

    def test_imported_module_alias_and_inline_module_paths(self):
        self.assert_cycle(
            {
                "k/src/lib.rs": "mod a;\nmod b;\n",
                "k/src/a.rs": "use crate::b;\nfn f() { b::inner::g(); }\npub fn h() {}\n",
                "k/src/b.rs": "pub mod inner { pub fn g() { crate::a::h(); } }\n",
            },
            "k/src/a.rs -> k/src/b.rs -> k/src/a.rs",
        )

    def test_an_item_defined_in_lib_rs_is_an_edge_to_lib_rs(self):
        self.assert_cycle(
            {
                "k/src/lib.rs": "mod a;\npub use a::A;\npub const HELPER: u8 = 1;\n",
                "k/src/a.rs": "use crate::HELPER;\npub struct A;\n",
            },
            "k/src/a.rs -> k/src/lib.rs -> k/src/a.rs",
        )

    def test_path_attribute_and_separate_crate_roots(self):
        self.assert_cycle(
            {
                "k/src/lib.rs": '#[path = "impls/x.rs"]\nmod x;\nmod y;\n',
                "k/src/impls/x.rs": "use crate::y::Y;\n",
                "k/src/y.rs": "use crate::x::X;\n",
                "k/src/main.rs": "mod y;\nfn main() {}\n",
                "k/tests/t/main.rs": "mod helpers;\n",
                "k/tests/t/helpers.rs": "use super::helpers;\n",
            },
            "import cycle in the crate rooted at k/src/lib.rs",
            "k/src/impls/x.rs -> k/src/y.rs -> k/src/impls/x.rs",
            "1 group(s) of files in a cycle, in 3 crate target(s)",
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--graph", action="store_true", help="also print every edge")
    parser.add_argument("--self-test", action="store_true", help="run the script's own tests")
    args = parser.parse_args()
    if args.self_test:
        result = unittest.main(argv=[sys.argv[0]], exit=False, verbosity=1).result
        return 0 if result.wasSuccessful() else 1
    return check(args.root, args.graph)


if __name__ == "__main__":
    sys.exit(main())
