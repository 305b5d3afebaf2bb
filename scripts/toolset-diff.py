#!/usr/bin/env python3
"""Differential test of `as-edit --toolset agent_toolset_20260401` against
Anthropic's reference implementation (PyPI `anthropic`,
`anthropic.lib.tools.agent_toolset`).

For every case it builds a generated tree at one fixed path (`BASE/ws`, with
`BASE/outside` beside it for the escapes), calls the reference tool on it,
snapshots the tree, builds the same tree again at the same path (same bytes,
modes and mtimes), runs `as-edit --toolset agent_toolset_20260401` there
(the request on stdin or as `--request-b64`), and compares:

- the text, byte for byte: the reference's `str` result, or its content
  blocks as JSON (image/PDF reads), or the text a tool runner sends for an
  exception (`ToolError`'s message; `repr()` of anything else, as
  `anthropic.lib.tools._tool_dispatch.tool_error_content` renders it);
- the status: the reference raised (the runner sets `is_error`) <=> exit 1,
  content blocks <=> exit 3, else exit 0;
- for write and edit, the whole of `BASE` afterwards (types, bytes, modes,
  link targets; no temp left), since as-edit writes atomically where the
  reference truncates in place.

The reference's environment is pinned: Python 3.11, Debian 12's ripgrep 13
on PATH (the grep tool runs `rg --no-config -n --no-heading -e P -- ROOT`),
HOME an empty directory (rg reads a global gitignore from it), umask 022.

A difference is either explained by one of REASONS (each counted by name;
they are the README's list) or unexplained; the run exits 1 when any case is
unexplained. Where the reference's order depends on directory order (rg's
parallel walk; ties of glob's newest-first sort) the lines are compared
sorted, and a case that is equal only so is counted under its reason.

Usage: toolset-diff.py --bin target/release/as-edit [--cases N] [--seed S]
       [--tools read,write,edit,glob,grep] [--show N] [--keep]
"""

from __future__ import annotations

import os
import sys
import json
import stat
import shutil
import random
import asyncio
import argparse
import tempfile
import subprocess
import collections
from base64 import b64encode

TOOLSET = "agent_toolset_20260401"

# Every documented reason a text may differ; the README lists the same.
REASONS = {
    "directory-order": "grep over a directory: rg walks in parallel, so its line order "
    "is the file system's and the threads'; compared as sorted lines",
    "mtime-tie-order": "glob: files with equal mtimes keep the directory order, "
    "which the two walks need not share; compared as sorted lines",
    "grep-cut-order": "grep output over 100 KiB: which lines precede the cut depends on rg's walk "
    "order; both are cut at the same place with the same notice and every kept line is one of rg's",
    "regex-property-not-built": "grep with \\p{..} of a boolean property, an age or a segmentation "
    "class (\\p{Alphabetic}, \\p{Age=1.1}, \\p{WB=ALetter}): the static binary leaves those Unicode tables "
    "out, so as-edit refuses ('Unicode property not found') what rg searches",
    "newline-name-globstar": "grep over a directory with an ignore rule holding '**' and a file whose "
    "path holds a newline: rg's globset turns '**' into a regex '.*' that does not cross a newline, so "
    "the rule may leave that file searched; as-edit's rule ignores it. Every other line is the same",
    "binary-late-nul": "grep over a directory meeting a file whose first NUL lies past rg's first read "
    "(64 KiB or more): rg prints the lines of the blocks before it and a WARNING line, as-edit skips the file",
    "surrogate-in-input": "the input holds a lone surrogate (\\udce9: how Python spells the byte of a "
    "name that is not UTF-8): the reference's file system calls turn it back into that byte, as-edit "
    "refuses such JSON (exit 2); a model never sees one, since results carry U+FFFD instead",
    "fifo-blocks-reference": "grep or write naming a FIFO: the reference blocks forever opening it "
    "(rg; open for writing), as-edit answers at once; the reference is not called",
}

WORDS = ["foo", "bar", "baz", "qux", "Foo", "fn", "let", "x", "é", "日本", "a b", "::", "--", "foo_bar"]
NAMES = [
    "a.txt", "b.py", "c.rs", "README.md", "notes", "data.bin", "img.png", "pic.JPG", "doc.pdf",
    "with space.txt", "co:lon.txt", "-lead.txt", "tab\there.txt", "new\nline.txt", ".hidden",
    ".env", "x.tar.gz", "[brack].txt", "star*.txt", "q?.txt", "{a,b}.txt", "é.txt", "UPPER.TXT",
    "a.", ".png", "crlf.txt", "caf\udce9.txt",  # the last is b"caf\xe9.txt": not UTF-8
]
DIRS = ["sub", "src", "deep", ".dot", "node_modules", "sp ace", "co:l", "lib"]


def rand_text(rng: random.Random, lines: int, crlf: bool = False, long_line: bool = False) -> bytes:
    out = []
    for _ in range(lines):
        n = rng.randint(0, 8)
        line = " ".join(rng.choice(WORDS) for _ in range(n))
        if long_line and rng.random() < 0.05:
            line = "foo" * rng.randint(700, 1400)
        out.append(line)
    sep = "\r\n" if crlf else "\n"
    text = sep.join(out)
    if rng.random() < 0.7:
        text += sep
    return text.encode("utf-8")


def rand_content(rng: random.Random, name: str) -> bytes:
    k = rng.random()
    if name.endswith((".png", ".JPG", ".pdf")) and rng.random() < 0.8:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    if name == "crlf.txt" or k < 0.1:
        return rand_text(rng, rng.randint(0, 30), crlf=True)
    if k < 0.15:
        return b""
    if k < 0.22:
        body = rand_text(rng, rng.randint(1, 10))
        at = rng.randint(0, len(body))
        return body[:at] + b"\0" + body[at:]
    if k < 0.27:
        body = rand_text(rng, rng.randint(1, 10))
        at = rng.randint(0, len(body))
        return body[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc"]) + body[at:]
    if k < 0.31:
        # Around the read (110,000) and edit (262,144) byte limits.
        size = rng.choice([109_990, 110_000, 110_001, 150_000, 262_144, 262_145, 300_000])
        line = b"foo bar baz qux\n"
        body = (line * (size // len(line) + 1))[:size]
        return body
    if k < 0.35:
        return rand_text(rng, rng.randint(1, 20), long_line=True)
    if k < 0.39:
        # A byte-order mark: rg drops a UTF-8 one and transcodes UTF-16.
        text = rand_text(rng, rng.randint(0, 12), crlf=rng.random() < 0.2).decode()
        if rng.random() < 0.3:
            text = text.replace("o", rng.choice(["\u00e9", "\U0001d11e", "\0"]), 1)
        bom = rng.choice(["utf-8", "utf-16-le", "utf-16-be"])
        if bom == "utf-8":
            return b"\xef\xbb\xbf" + text.encode()
        tail = rng.choice([b"", b"", b"A", b"\x00\xd8" if bom == "utf-16-le" else b"\xd8\x00"])
        mark = b"\xff\xfe" if bom == "utf-16-le" else b"\xfe\xff"
        return mark + text.encode(bom) + tail
    return rand_text(rng, rng.randint(1, 40))


class Tree:
    """A generated tree: a list of entries applied in order under BASE."""

    def __init__(self, rng: random.Random, tid: int):
        self.entries: list[tuple] = []  # (kind, relpath-from-BASE, payload, mode, mtime_ns)
        self.files: list[str] = []  # relative to ws
        self.dirs: list[str] = [""]
        self.links: list[str] = []
        self.fifos: list[str] = []
        self.git = rng.random() < 0.35
        t0 = 1_600_000_000_000_000_000 + tid * 1_000_000_000_000
        tie = rng.random() < 0.3

        def mtime() -> int:
            if tie and rng.random() < 0.3:
                return t0
            return t0 + rng.randrange(1, 10**15)

        self.entries.append(("dir", "outside", None, 0o755, t0))
        self.entries.append(("file", "outside/secret.txt", b"foo secret\n", 0o644, t0))
        self.entries.append(("dir", "ws", None, 0o755, t0))
        for _ in range(rng.randint(0, 6)):
            parent = rng.choice(self.dirs)
            d = os.path.join(parent, rng.choice(DIRS)) if parent else rng.choice(DIRS)
            if d in self.dirs:
                continue
            self.dirs.append(d)
            self.entries.append(("dir", "ws/" + d, None, 0o755, mtime()))
        for _ in range(rng.randint(1, 14)):
            parent = rng.choice(self.dirs)
            name = rng.choice(NAMES)
            p = os.path.join(parent, name) if parent else name
            if p in self.files or p in self.dirs:
                continue
            mode = rng.choice([0o644, 0o644, 0o600, 0o755, 0o444])
            self.files.append(p)
            self.entries.append(("file", "ws/" + p, rand_content(rng, name), mode, mtime()))
        rule_pool = ["*.py", "sub/", "/notes", "!b.py", "deep", "*.txt", "!a.txt", ".env", "#c", "!.env",
                     "!.hidden", "node_modules", "*.md", "!*.md", "src/*.rs", "/lib", "!.dot/", "co:l", "sp ace/",
                     # gitignore's harder forms: **, ranges, escapes, trailing spaces, anchored globs.
                     "**/*.txt", "sub/**", "deep/**/a.txt", "*.t?t", "[ab].*", "\\#c", "a.txt ", "a.txt\\ ",
                     "/sub/*.txt", "!sub/", "**/deep", "*.[pt]*", "!**/a.txt", "/*.md", "*/", "!*/",
                     "\\!b.py", ".*", "!.*", "**", "*.TXT", "src/**"]
        if self.git:
            gd = rng.choice([d for d in self.dirs if not d.startswith(".")] if rng.random() < 0.2 else [""])
            g = "ws/" + gd + "/.git" if gd else "ws/.git"
            self.entries.append(("dir", g, None, 0o755, t0))
            if rng.random() < 0.4:
                # rg reads the repository's info/exclude, weaker than any .gitignore.
                self.entries.append(("dir", g + "/info", None, 0o755, t0))
                rules = rng.sample(rule_pool, rng.randint(1, 4))
                self.entries.append(("file", g + "/info/exclude", ("\n".join(rules) + "\n").encode(), 0o644, t0))
        for name, p_ in ((".gitignore", 0.5 if self.git else 0.15), (".ignore", 0.2), (".rgignore", 0.12)):
            for d in self.dirs:
                if rng.random() < (p_ if d == "" else p_ / 3):
                    rules = rng.sample(rule_pool, rng.randint(1, 4))
                    rel = os.path.join(d, name) if d else name
                    self.entries.append(("file", "ws/" + rel, ("\n".join(rules) + "\n").encode(), 0o644, mtime()))
                    self.files.append(rel)
        for _ in range(rng.randint(0, 4)):
            parent = rng.choice(self.dirs)
            name = rng.choice(["ln", "ln.txt", "dl", "out", "loop", "dang", "up.png"])
            p = os.path.join(parent, name) if parent else name
            if p in self.files or p in self.dirs or p in self.links:
                continue
            depth = p.count("/")
            up = "../" * depth
            target = rng.choice(
                [
                    up + (rng.choice(self.files) if self.files else "a.txt"),
                    up + rng.choice(self.dirs[1:] or ["sub"]),
                    up + "../outside/secret.txt",
                    up + "../outside",
                    "/etc",
                    name,  # itself: a loop
                    "missing-target",
                ]
            )
            self.links.append(p)
            self.entries.append(("link", "ws/" + p, target, 0, 0))
        if rng.random() < 0.15:
            self.fifos.append("fifo")
            self.entries.append(("fifo", "ws/fifo", None, 0o644, mtime()))

    def build(self, base: str) -> None:
        if os.path.lexists(base):
            shutil.rmtree(base)
        os.mkdir(base)
        dirs_mtime = []
        for kind, rel, payload, mode, mt in self.entries:
            p = os.path.join(base, rel)
            if kind == "dir":
                os.makedirs(p, exist_ok=True)
                dirs_mtime.append((p, mode, mt))
            elif kind == "file":
                with open(p, "wb") as f:
                    f.write(payload)
                os.chmod(p, mode)
                os.utime(p, ns=(mt, mt))
            elif kind == "link":
                os.symlink(payload, p)
            elif kind == "fifo":
                os.mkfifo(p)
                os.utime(p, ns=(mt, mt))
        for p, mode, mt in reversed(dirs_mtime):
            os.chmod(p, mode)
            os.utime(p, ns=(mt, mt))


def snapshot(base: str) -> dict:
    snap = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, base)
            if stat.S_ISLNK(st.st_mode):
                snap[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                snap[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    snap[rel] = ("file", stat.S_IMODE(st.st_mode), f.read())
            else:
                snap[rel] = ("other", stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
    return snap


def pick_path(rng: random.Random, tree: Tree, base: str, kind: str) -> str:
    """A `file_path` / `path` the model might send: mostly real, some not."""
    k = rng.random()
    pool = {
        "file": tree.files or ["a.txt"],
        "dir": tree.dirs,
        "any": tree.files + tree.dirs + tree.links + tree.fifos,
    }[kind] or ["a.txt"]
    if k < 0.55:
        return rng.choice(pool)
    if k < 0.63:
        return rng.choice(tree.links) if tree.links else rng.choice(pool)
    if k < 0.68:
        return os.path.join(base, "ws", rng.choice(pool))
    if k < 0.74:
        return rng.choice(["../outside/secret.txt", "/etc/passwd", "../outside", "..", "/", "../ws/a.txt",
                           os.path.join(base, "outside/secret.txt"), "sub/../../outside/secret.txt"])
    if k < 0.8:
        return rng.choice(["", ".", "./", "missing.txt", "missing/dir/x.txt", "a.txt/x", "sub/", "./a.txt",
                           "sub//a.txt", "sub/./../a.txt", "a\u0000b", " a.txt", "~/a.txt", "$HOME"])
    if k < 0.85 and tree.fifos:
        return rng.choice(tree.fifos)
    d = rng.choice(tree.dirs)
    name = rng.choice(NAMES + ["new.txt", "n/e/w.txt", "ünï.md"])
    return os.path.join(d, name) if d else name


def substring(rng: random.Random, data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return rng.choice(WORDS)
    if not text or rng.random() < 0.15:
        return rng.choice(WORDS + ["", "\r\n", "\n", "foo\n", "nothing-here"])
    i = rng.randrange(len(text))
    j = min(len(text), i + rng.choice([1, 2, 3, 5, 8, 20, 60]))
    return text[i:j]


def content_of(tree: Tree, rel: str) -> bytes:
    for kind, p, payload, _, _ in tree.entries:
        if kind == "file" and p == "ws/" + rel:
            return payload
    return b""


def rand_int_like(rng: random.Random, lo: int, hi: int):
    v = rng.randint(lo, hi)
    k = rng.random()
    if k < 0.85:
        return v
    return rng.choice([str(v), float(v), f" {v} ", v + 0.5, True, False, None, f"{v}_0", f"+{v}", 10**20, -(10**20)])


def gen_input(rng: random.Random, tree: Tree, base: str, tool: str):
    if rng.random() < 0.03:
        # Damaged: not an object, a missing or extra field, a wrong type.
        return rng.choice([[], "x", None, 5, {}, {"file_path": 5}, {"pattern": None}, {"file_path": "a.txt", "extra": 1},
                           {"file_path": ["a.txt"]}, {"pattern": "*", "path": 3}])
    if tool == "read":
        inp = {"file_path": pick_path(rng, tree, base, "file")}
        k = rng.random()
        if k < 0.45:
            n = content_of(tree, inp["file_path"]).count(b"\n") + 2
            inp["view_range"] = [rand_int_like(rng, -2, n + 1), rand_int_like(rng, -2, n + 2)]
        elif k < 0.52:
            inp["view_range"] = rng.choice([[], [1], [1, 2, 3], None, [0, 0], [-1, -1], [1, -1], [3, 1], "1,2"])
        return inp
    if tool == "write":
        content = rng.choice([
            "", "hello\n", "a\r\nb\r\n", "é日本\n", "no newline", "x" * rng.randint(0, 5000),
            rand_text(rng, rng.randint(0, 20)).decode(),
        ])
        return {"file_path": pick_path(rng, tree, base, "any"), "content": content}
    if tool == "edit":
        fp = pick_path(rng, tree, base, "file")
        old = substring(rng, content_of(tree, fp))
        inp = {"file_path": fp, "old_string": old, "new_string": rng.choice(["", "X", "foo", "é\r\n", old + old, "\n"])}
        k = rng.random()
        if k < 0.35:
            inp["replace_all"] = True
        elif k < 0.5:
            inp["replace_all"] = rng.choice([False, None, "yes", "no", 1, 0, 2, "true", "TRUE", "off"])
        return inp
    if tool == "glob":
        comps = ["*", "**", "*.txt", "?", "[a-c]*", "[!a]*", "{a,b}*", ".*", "*.py", "sub", "src", "*.[tp][xy]*",
                 "[]]*", "[!]*", "[z-a]*", "*\n*", "* *", "*:*", "-*", "[[]*", "é*", "*.PNG", "*.png"]
        n = rng.choice([1, 1, 1, 2, 2, 3])
        pattern = "/".join(rng.choice(comps) for _ in range(n))
        k = rng.random()
        if k < 0.06:
            pattern = rng.choice(["", ".", "./*", "/etc/*", "../*", "a/../*", "*/", "**/", "a**", "**/*/", "./",
                                  "//*", "sub//*", "*/.", "..", "*/..", "~"])
        elif k < 0.1:
            pattern += "/"
        inp = {"pattern": pattern}
        if rng.random() < 0.3:
            inp["path"] = rng.choice([pick_path(rng, tree, base, "dir"), "", None, pick_path(rng, tree, base, "any")])
        return inp
    if tool == "grep":
        pats = WORDS + ["fo+", "fo+ ba[rz]", "qux$", "^[a-f]+$", "o{2}", "(foo|bar) baz", "[^ ]+:", "x|é", "日本.",
                        "\\\\", "\\.", "-", "\\x{65}", "[[:digit:]]", "foo\\b", "\\w+é", "(?i)é", "^", "$", "^foo$", "^", "^$", "", "(", "a|b", "[", "(?i)FOO", "bar$", "^$", "", "(", "a|b", "[", "(?i)FOO", "\\bfn\\b", "\\d+", "[[:alpha:]]+",
                        "\\p{Greek}", "é", ".", "foo.*bar", "\\x00", "x{2,}", "(?m)^qux", "\\", "*", "a{", "\\s+$",
                        "\\r$", "secret", "foo\\nbar"] + UNICODE_PATTERNS + BAD_PATTERNS
        inp = {"pattern": rng.choice(pats)}
        if rng.random() < 0.5:
            inp["path"] = rng.choice([pick_path(rng, tree, base, "any"), "", None])
        return inp
    raise AssertionError(tool)


# rg's Unicode dialect: classes, scripts, properties and case folding on non-ASCII text.
UNICODE_PATTERNS = ["\\p{Greek}+", "\\p{Han}", "\\p{L}+é", "\\p{Lu}", "\\w+", "\\W", "^\\w+$", "\\d", "\\D+",
                    "\\s\\S", "\\bé", "é\\b", "\\B", "(?i)É", "(?i)日本", "(?i)STRASSE", "(?i)ſ", "(?i)k",
                    "[\\p{L}&&\\p{Lu}]", "[\\w--\\d]", "[[:^alpha:]]", "\\p{Alphabetic}+", "\\p{scx=Han}",
                    "(?-u:\\w)+", "[^a-z]+", ".é", "[é-ü]", "\\p{Age=1.1}", "\\p{WB=ALetter}"]
# Property names of the Unicode tables the static binary leaves out (unicode-bool,
# -age, -segment: README, Performance).
NOT_BUILT = ("Alphabetic", "Age", "WB", "GCB", "SB", "White_Space", "Emoji", "Math", "Uppercase", "Lowercase")
# Patterns rg 13 refuses, each in its own words (caret line, reason, PCRE2 advice), and
# near misses it takes.
BAD_PATTERNS = ["(?=x)", "(?<!x)y", "(a)\\1", "\\p{Foo}", "\\pX", "x{2,1}", "\\<", "a\\>", "(?<n>a)",
                "\\b{start}", "\\b{", "(?z)", "(?iR)x", "[z-a]", "a)", "(?P<n>a)(?P<n>b)", "\\u{110000}", "é(",
                "(?i", "\\d\\c", "\\p{Greek", "a{,3}", "(é", "\\K", "[[:foo:]]", "a**", "\\b{3}", "[\\<]",
                "\\(?<n>", "(?<=a)b"]


def names_a_fifo(ws: str, inp) -> bool:
    """Whether the call's path resolves to a FIFO, which the reference's
    rg (grep) and open() (write) block on forever."""
    if not isinstance(inp, dict):
        return False
    p = inp.get("path", inp.get("file_path"))
    if not isinstance(p, str) or "\0" in p:
        return False
    try:
        return stat.S_ISFIFO(os.stat(os.path.join(ws, p)).st_mode)
    except OSError:
        return False


def rg_refuses(rg: str, pattern) -> bool:
    """Whether rg refuses the pattern itself (exit 2 on an empty input)."""
    if not isinstance(pattern, str) or "\0" in pattern:
        return True
    return subprocess.run([rg, "--no-config", "-e", pattern, "--", "/dev/null"], capture_output=True).returncode == 2


def reference_call(tools: dict, name: str, inp) -> tuple[int, str]:
    from anthropic.lib.tools._tool_dispatch import tool_error_content, tool_result_content

    try:
        # As a runner sends it: a lone surrogate (a name that is not UTF-8) becomes U+FFFD.
        result = tool_result_content(asyncio.run(tools[name].call(inp)))
    except Exception as e:  # the runner sends every exception as is_error content
        content = tool_error_content(e)
        return 1, content if isinstance(content, str) else json.dumps(content)
    if isinstance(result, str):
        return 0, result
    # Content blocks (an image or PDF read): as-edit exits 3 for them.
    return 3, json.dumps(list(result))


def has_surrogate(v) -> bool:
    if isinstance(v, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in v)
    if isinstance(v, dict):
        return any(has_surrogate(k) or has_surrogate(x) for k, x in v.items())
    if isinstance(v, list):
        return any(has_surrogate(x) for x in v)
    return False


def ours_call(binary: str, ws: str, name: str, inp, use_b64: bool, env: dict) -> tuple[int, str]:
    req = json.dumps({"name": name, "input": inp}).encode()
    argv = [binary, "--toolset", TOOLSET]
    if use_b64:
        argv += ["--request-b64", b64encode(req).decode()]
        stdin = subprocess.DEVNULL
        proc = subprocess.run(argv, cwd=ws, stdin=stdin, capture_output=True, timeout=60, env=env)
    else:
        proc = subprocess.run(argv, cwd=ws, input=req, capture_output=True, timeout=60, env=env)
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


def same_blocks(a: str, b: str) -> bool:
    try:
        return json.loads(a) == json.loads(b)
    except ValueError:
        return False


def mtime_of(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except (OSError, ValueError):
        return 0.0


def newline_globstar(ws: str, rt: str, ot: str) -> bool:
    """Whether the texts differ only in lines of files whose paths hold a newline, as-edit's
    being among rg's, in a tree with an ignore rule holding `**`."""
    if "\n[output truncated at" in rt or "\n[output truncated at" in ot:
        return False
    names, globstar = [], False
    for d, dirs, files in os.walk(ws):
        for f in files:
            full = os.path.join(d, f)
            if "\n" in os.path.relpath(full, ws):
                names.append(full)
            if f in (".gitignore", ".ignore", ".rgignore", "exclude"):
                with open(full, "rb") as fh:
                    globstar |= any(b"**" in line for line in fh.read().split(b"\n") if not line.startswith(b"#"))
    if not names or not globstar:
        return False
    import re

    records = re.compile("|".join(re.escape(n) + r":\d+:[^\n]*\n?" for n in names))
    theirs, mine = records.findall(rt), records.findall(ot)
    if collections.Counter(mine) - collections.Counter(theirs):
        return False
    rest = lambda t: sorted(records.sub("", "" if t == "no matches" else t).split("\n"))  # noqa: E731
    return rest(rt) == rest(ot)


def explain(tool: str, inp, ref: tuple[int, str], ours: tuple[int, str], full_rg: str | None,
            ws: str = "") -> str | None:
    """None when equal; a reason from REASONS; or 'UNEXPLAINED'."""
    if ref == ours:
        return None
    (rc, rt), (oc, ot) = ref, ours
    if rc == oc == 3 and same_blocks(rt, ot):
        return None
    if oc == 2 and has_surrogate(inp) and ot.startswith("as-edit --toolset: the request is not JSON"):
        return "surrogate-in-input"
    pattern = inp.get("pattern") if tool == "grep" and isinstance(inp, dict) else None
    if pattern is not None and oc == 1 and "\nerror: Unicode property not found\n" in ot \
            and not rt.startswith("grep: rg failed: regex parse error:") \
            and any(n in pattern for n in NOT_BUILT):
        return "regex-property-not-built"
    if pattern is not None and ws and rc == oc == 0 and newline_globstar(ws, rt, ot):
        return "newline-name-globstar"
    if tool == "grep" and "WARNING: stopped searching binary file after match" in rt:
        return "binary-late-nul"
    if rc != oc:
        return "UNEXPLAINED"
    searches_dir = tool == "grep" and not rt.startswith(("grep:",)) and rc == 0
    if sorted(rt.split("\n")) == sorted(ot.split("\n")):
        # Only lines of equal mtimes may trade places.
        if tool == "glob" and [mtime_of(x) for x in rt.split("\n")] == [mtime_of(x) for x in ot.split("\n")]:
            return "mtime-tie-order"
        if searches_dir:
            return "directory-order"
    if tool == "grep" and rc == 0 and full_rg is not None:
        notice = "\n[output truncated at 102400 bytes]"
        if rt.endswith(notice) and ot.endswith(notice) and len(rt) == len(ot):
            pass
        if rt.endswith(notice) and ot.endswith(notice):
            kept = set(full_rg.split("\n"))
            body = ot[: -len(notice)].split("\n")
            # All but the last line (cut mid-line) must be rg's whole lines.
            if len(ot) <= len(rt) + 2000 and all(line in kept for line in body[:-1]):
                return "grep-cut-order"
    return "UNEXPLAINED"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--tools", default="read,write,edit,glob,grep")
    ap.add_argument("--per-tree", type=int, default=20)
    ap.add_argument("--show", type=int, default=10, help="print the first N unexplained cases")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    from anthropic import __version__ as sdk_version
    from anthropic.lib.tools.agent_toolset import AgentToolContext, beta_agent_toolset_20260401

    rg = shutil.which("rg")
    rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0] if rg else ""
    if not rg_version.startswith("ripgrep 13."):
        print(f"toolset-diff: needs ripgrep 13 on PATH (Debian 12's), found {rg_version or 'none'}", file=sys.stderr)
        return 2
    if sys.version_info[:2] != (3, 11):
        print(f"toolset-diff: needs Python 3.11 (pathlib.glob's rules), this is {sys.version.split()[0]}", file=sys.stderr)
        return 2
    binary = os.path.abspath(args.bin)
    tools_wanted = args.tools.split(",")
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="toolset-diff-")
    home = os.path.join(tmp, "home")
    os.mkdir(home)
    base = os.path.join(tmp, "base")
    ws = os.path.join(base, "ws")
    os.environ["HOME"] = home  # rg reads a global gitignore through HOME; keep it empty
    os.environ.pop("XDG_CONFIG_HOME", None)
    os.environ.pop("RIPGREP_CONFIG_PATH", None)
    os.umask(0o022)
    env = dict(os.environ)
    counts: collections.Counter[str] = collections.Counter()
    per_tool: collections.Counter[str] = collections.Counter()
    shown = 0
    case = 0
    tid = 0
    sys.stdout.reconfigure(line_buffering=True)
    print(f"toolset-diff: anthropic {sdk_version}, {rg_version}, Python {sys.version.split()[0]}, seed {args.seed}")
    try:
        while case < args.cases:
            tree = Tree(rng, tid)
            tid += 1
            tree.build(base)
            ctx = AgentToolContext(workdir=ws)
            ref_tools = {t.name: t for t in beta_agent_toolset_20260401(ctx)}
            for _ in range(args.per_tree):
                if case >= args.cases:
                    break
                tool = rng.choice(tools_wanted)
                inp = gen_input(rng, tree, base, tool)
                use_b64 = rng.random() < 0.3
                case += 1
                per_tool[tool] += 1
                mutates = tool in ("write", "edit")
                names_fifo = tool in ("grep", "write") and names_a_fifo(ws, inp)
                if names_fifo and tool == "grep" and rg_refuses(rg, inp.get("pattern")):
                    names_fifo = False  # rg refuses the pattern before it opens anything
                if names_fifo:
                    # The reference would hang; as-edit must refuse at once.
                    ours = ours_call(binary, ws, tool, inp, use_b64, env)
                    ok = ours[0] == 1 and ours[1].endswith(": not a regular file")
                    counts["fifo-blocks-reference" if ok else "UNEXPLAINED"] += 1
                    if not ok and shown < args.show:
                        shown += 1
                        print(f"--- unexplained case {case} (a FIFO): {tool} {json.dumps(inp)[:300]}")
                        print(f"    as-edit   exit {ours[0]}: {ours[1][:400]!r}")
                    continue
                ref = reference_call(ref_tools, tool, inp)
                ref_snap = snapshot(base) if mutates else None
                if mutates:
                    tree.build(base)
                ours = ours_call(binary, ws, tool, inp, use_b64, env)
                ours_snap = snapshot(base) if mutates else None
                full_rg = None
                if tool == "grep" and ref[1].endswith("bytes]"):
                    p = inp.get("path") or ws
                    full_rg = subprocess.run(
                        [rg, "--no-config", "-n", "--no-heading", "-e", inp["pattern"], "--",
                         os.path.realpath(os.path.join(ws, p))], capture_output=True
                    ).stdout.decode(errors="replace")
                why = explain(tool, inp, ref, ours, full_rg, ws)
                if why is None and ref_snap != ours_snap:
                    why = "UNEXPLAINED"
                counts[why or "identical"] += 1
                if why == "UNEXPLAINED" and shown < args.show:
                    shown += 1
                    print(f"--- unexplained case {case} (tree {tid - 1}, {'b64' if use_b64 else 'stdin'}): "
                          f"{tool} {json.dumps(inp)[:300]}")
                    print(f"    reference exit {ref[0]}: {ref[1][:400]!r}")
                    print(f"    as-edit   exit {ours[0]}: {ours[1][:400]!r}")
                    if ref_snap != ours_snap:
                        diff = sorted(set(ref_snap.items()) ^ set(ours_snap.items()), key=str)
                        print(f"    trees differ: {str(diff)[:400]}")
                if mutates:
                    tree.build(base)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    unexplained = counts.pop("UNEXPLAINED", 0)
    identical = counts.pop("identical", 0)
    print(f"cases: {case} ({', '.join(f'{t} {n}' for t, n in sorted(per_tool.items()))})")
    print(f"identical: {identical}")
    print(f"differing for a documented reason: {sum(counts.values())}")
    for reason, n in sorted(counts.items()):
        print(f"  {reason}: {n} ({REASONS[reason]})")
    print(f"unexplained: {unexplained}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
