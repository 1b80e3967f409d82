"""Turn a model's code into something to execute, keeping the user's own line numbers.

The reference rewrote every snippet (prepended imports, regex-fixed f-strings, dedented lines)
and so broke valid code and shifted line numbers. Here valid code runs unchanged; the
reference's repairs (f-string newlines, stray indentation, markdown fences) are tried only
when the code does not parse, and a repair is kept only if the result parses. A trailing
expression statement at module level has its value printed, as the reference intended.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

FILENAME = "<string>"
"""The file name tracebacks show for the user's code (no temp-file names)."""

_FSTRING = re.compile(r"(?<![A-Za-z0-9_])(?:[rR][fF]|[fF][rR]?)(\"\"\"|'''|\"|')(.*?)\1", re.DOTALL)
_FENCE_OPEN = re.compile(r"^\s*```[A-Za-z0-9_+-]*\s*$")
_FENCE_CLOSE = re.compile(r"^\s*```\s*$")


@dataclass(frozen=True)
class Prepared:
    """Code ready to compile, or the syntax error to report."""

    tree: ast.Module | None
    source: str
    line_map: list[int] = field(default_factory=list)
    """``line_map[i]`` is the user's line for line ``i + 1`` of ``source`` (empty: identity)."""
    error: SyntaxError | None = None
    repairs: tuple[str, ...] = ()

    def user_line(self, line: int | None) -> int | None:
        """Map a line of the executed source back to the user's line."""
        if line is None or not self.line_map or not 1 <= line <= len(self.line_map):
            return line
        return self.line_map[line - 1]


def prepare(code: str) -> Prepared:
    """Parse ``code``; on a syntax error try the repairs; add the trailing-value print."""
    first = _parse(code)
    if isinstance(first, ast.Module):
        return Prepared(tree=_print_trailing_value(first), source=code)
    for name, repair in _REPAIRS:
        fixed, line_map = repair(code)
        if fixed == code:
            continue
        tree = _parse(fixed)
        if isinstance(tree, ast.Module):
            return Prepared(
                tree=_print_trailing_value(tree), source=fixed, line_map=line_map, repairs=(name,)
            )
    return Prepared(tree=None, source=code, error=first)


def _parse(code: str) -> ast.Module | SyntaxError:
    try:
        tree = ast.parse(code, filename=FILENAME, mode="exec")
        # Some errors only the compiler sees ('*0', 'return' outside a function): checked
        # here so such code is repaired or reported like any other syntax error.
        compile(tree, FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except (ValueError, MemoryError, RecursionError) as exc:
        # NUL bytes (ValueError on 3.11), absurd nesting: reported like a syntax error.
        err = SyntaxError(f"{type(exc).__name__}: {exc}")
        err.filename = FILENAME
        return err
    return tree


def _print_trailing_value(tree: ast.Module) -> ast.Module:
    """Print the value of a final module-level expression or simple assignment.

    ``print(...)`` calls and ``None`` values print nothing extra, like a REPL; an indented
    last line (inside a block) is left alone instead of being broken as the reference did.
    """
    if not tree.body:
        return tree
    last = tree.body[-1]
    target: ast.expr | None = None
    if isinstance(last, ast.Expr):
        if _is_print_call(last.value):
            return tree
        assign = ast.Assign(
            targets=[ast.Name(id="__apollo_value__", ctx=ast.Store())], value=last.value
        )
        tree.body[-1] = ast.copy_location(assign, last)
        target = ast.Name(id="__apollo_value__", ctx=ast.Load())
    elif (
        isinstance(last, ast.Assign)
        and len(last.targets) == 1
        and isinstance(last.targets[0], ast.Name)
    ):
        target = ast.Name(id=last.targets[0].id, ctx=ast.Load())
    elif (
        isinstance(last, (ast.AnnAssign, ast.AugAssign))
        and isinstance(last.target, ast.Name)
        and not (isinstance(last, ast.AnnAssign) and last.value is None)
    ):
        target = ast.Name(id=last.target.id, ctx=ast.Load())
    if target is None:
        return tree
    tree.body.append(_print_if_not_none(target, last))
    ast.fix_missing_locations(tree)
    return tree


def _is_print_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    )


def _print_if_not_none(value: ast.expr, where: ast.stmt) -> ast.stmt:
    check = ast.Compare(left=value, ops=[ast.IsNot()], comparators=[ast.Constant(None)])
    call = ast.Expr(ast.Call(func=ast.Name(id="print", ctx=ast.Load()), args=[value], keywords=[]))
    stmt = ast.If(test=check, body=[call], orelse=[])
    for node in ast.walk(stmt):
        ast.copy_location(node, where)
    return stmt


def fix_fstring_newlines(code: str) -> tuple[str, list[int]]:
    """Escape literal newlines inside f-string literals (models often emit them)."""
    out: list[str] = []
    pos = 0
    for match in _FSTRING.finditer(code):
        quote = match.group(1)
        body = match.group(2)
        out.append(code[pos : match.start()])
        if len(quote) == 1 and "\n" in body:
            head = code[match.start() : match.start(2)]
            out.append(head + body.replace("\n", "\\n") + quote)
        else:
            out.append(match.group(0))
        pos = match.end()
    out.append(code[pos:])
    fixed = "".join(out)
    return fixed, _map_lines(code, fixed)


def _map_lines(original: str, fixed: str) -> list[int]:
    """For each line of ``fixed``, the original line it starts on (escaped newlines removed)."""
    line_map = [1]
    orig_line = 1
    i = j = 0
    while i < len(original) and j < len(fixed):
        if original[i] == fixed[j]:
            if original[i] == "\n":
                orig_line += 1
                line_map.append(orig_line)
            i += 1
            j += 1
        elif original[i] == "\n" and fixed.startswith("\\n", j):
            orig_line += 1
            i += 1
            j += 2
        else:  # pragma: no cover - the repair only ever replaces newlines
            i += 1
            j += 1
    return line_map


def fix_indentation(code: str) -> tuple[str, list[int]]:
    """Dedent lines indented deeper than a previous line that cannot open a block.

    The reference's rule: the first line is left-stripped; a line more indented than the
    nearest previous code line that contains no ``:`` takes that line's indentation.
    """
    lines = code.split("\n")
    fixed: list[str] = []
    prev_indent = 0
    prev_opens = True
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        if index == 0:
            line = stripped
        if not stripped or stripped.startswith("#"):
            fixed.append(line)
            continue
        indent = len(line) - len(line.lstrip())
        if index > 0 and indent > prev_indent and not prev_opens:
            line = " " * prev_indent + stripped
            indent = prev_indent
        fixed.append(line)
        prev_indent = indent
        prev_opens = ":" in stripped
    return "\n".join(fixed), []


def strip_fences(code: str) -> tuple[str, list[int]]:
    """Blank out markdown fence lines (kept as empty lines so line numbers stay)."""
    lines = code.split("\n")
    if not any(_FENCE_OPEN.match(line) for line in lines):
        return code, []
    return "\n".join(
        "" if _FENCE_OPEN.match(ln) or _FENCE_CLOSE.match(ln) else ln for ln in lines
    ), []


def _both(code: str) -> tuple[str, list[int]]:
    fixed, line_map = fix_fstring_newlines(code)
    return fix_indentation(fixed)[0], line_map


def _all(code: str) -> tuple[str, list[int]]:
    fixed, line_map = fix_fstring_newlines(strip_fences(code)[0])
    return fix_indentation(fixed)[0], line_map


_REPAIRS = (
    ("fstring-newlines", fix_fstring_newlines),
    ("indentation", fix_indentation),
    ("fences", strip_fences),
    ("fstring-newlines+indentation", _both),
    ("all", _all),
)
