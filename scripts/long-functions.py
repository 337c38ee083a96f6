#!/usr/bin/env python3
"""Lists C++ functions longer than --max-lines (80) and source files longer
than --max-file-lines (700), longest first: the refactor's to-do list
(issue 26: no function on the agent's or analyzer's central paths over 80
lines, no source file over 700). With --central, only agent/, analyzer/ and
tracer/ (what every probe and every window goes through); tests, fuzz
targets and benchmarks are never listed. Prints nothing when all is within
the limits; --check also exits 1 when it prints.

Reads the code as text: a function is a brace block at namespace or class
level whose head has a parameter list (lambdas and blocks inside a function
count towards it). Good enough for sizes; not a parser.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ALL = ("common", "topology", "tracer", "agent", "analyzer", "ctl", "sim", "deploy")
CENTRAL = ("agent", "analyzer", "tracer")
SOURCES = (".h", ".hpp", ".cc", ".cpp")
NOT_A_FUNCTION = re.compile(
    r"^\s*(namespace|class|struct|enum|union|extern|if|for|while|switch|catch|do|else|try)\b")


def strip(text: str) -> str:
    """The code with comments, strings, character literals and preprocessor
    lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        at_line_start = text[text.rfind("\n", 0, i) + 1:i].strip() == ""
        if c == "#" and at_line_start:
            j = i
            while True:  # to the end of the line, and of its continuations
                j = text.find("\n", j)
                if j < 0 or text[j - 1] != "\\":
                    break
                j += 1
            j = n if j < 0 else j
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "'" and 0 < i < n - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(c)  # a digit separator (1'000'000), not a character literal
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j, n - 1) - i + 1))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path: str):
    """(name, first line, lines) of each function defined in the file."""
    code = strip(open(path, encoding="utf-8", errors="replace").read())
    stack = []  # per open brace: True when it opened a function body
    head_start = 0  # where the current statement or head began
    body = None  # (name, start line, depth) of the function being read
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[head_start:i]
            inside = any(stack)
            is_function = (not inside and "(" in head and "=" not in head.split("(")[0]
                           and not NOT_A_FUNCTION.match(head.strip()))
            if is_function:
                before = head.split("(")[0].split()
                name = before[-1] if before else "?"
                start = line - code[head_start:i].lstrip().count("\n")
                body = (name, start)
            stack.append(is_function)
            head_start = i + 1
        elif c == "}":
            opened = stack.pop() if stack else False
            if opened and body:
                yield body[0], body[1], line - body[1] + 1
                body = None
            head_start = i + 1
        elif c == ";" or (c == ":" and not any(stack) and code[i - 6:i].endswith(("public", "ivate", "tected"))):
            if not any(stack):
                head_start = i + 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-lines", type=int, default=80)
    ap.add_argument("--max-file-lines", type=int, default=700)
    ap.add_argument("--central", action="store_true", help="only agent/, analyzer/, tracer/")
    ap.add_argument("--check", action="store_true", help="exit 1 when anything is listed")
    args = ap.parse_args()
    long_functions, long_files = [], []
    for top in CENTRAL if args.central else ALL:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding="utf-8", errors="replace") as f:
                    n = sum(1 for _ in f)
                if n > args.max_file_lines:
                    long_files.append((n, rel))
                for fn, start, lines in functions(path):
                    if lines > args.max_lines:
                        long_functions.append((lines, f"{rel}:{start}", fn))
    for lines, where, fn in sorted(long_functions, reverse=True):
        print(f"function {lines:4d} lines  {where}  {fn}")
    for n, rel in sorted(long_files, reverse=True):
        print(f"file     {n:4d} lines  {rel}")
    return 1 if args.check and (long_functions or long_files) else 0


if __name__ == "__main__":
    sys.exit(main())
