"""A first ``AGENTS.md`` from a look at the repository (``/init``).

No model is needed: the draft states what the files say. The project's name and summary
(its README), its layout (top-level folders and the languages in them), the commands its
build files define (Makefile targets, package.json scripts, pyproject scripts and tools,
Cargo, Go, just), and the linters and formatters it configures. The user (or the model)
refines it from there. Reading is bounded: at most :data:`MAX_FILES` files are looked at.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

from codebot_mcp.core.fsutil import atomic_write

FILE_NAME = "AGENTS.md"
MAX_FILES = 20_000
"""Files counted for the layout; a huge monorepo is sampled, not walked to the end."""
SKIP = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", "build", "dist", "target", ".tox"}
)
LANGUAGES = {
    ".py": "Python",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".js": "JavaScript",
    ".jsx": "JavaScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".rb": "Ruby",
    ".c": "C",
    ".h": "C",
    ".cc": "C++",
    ".cpp": "C++",
    ".cs": "C#",
    ".swift": "Swift",
    ".php": "PHP",
    ".sh": "Shell",
}
TOOLS = {
    "ruff.toml": "ruff",
    ".ruff.toml": "ruff",
    "mypy.ini": "mypy",
    ".eslintrc": "eslint",
    ".eslintrc.js": "eslint",
    ".eslintrc.json": "eslint",
    "eslint.config.js": "eslint",
    ".prettierrc": "prettier",
    "rustfmt.toml": "rustfmt",
    ".golangci.yml": "golangci-lint",
    ".pre-commit-config.yaml": "pre-commit",
    ".editorconfig": "editorconfig",
    "tsconfig.json": "TypeScript compiler (tsc)",
}


def draft(root: Path) -> str:
    """The text of a first ``AGENTS.md`` for the repository at ``root``."""
    sections = [
        f"# {root.name}\n\n"
        "Notes for coding agents working in this repository (a first draft written by "
        "codebot's /init from the files; edit it: what is wrong here misleads every session)."
    ]
    summary = readme_summary(root)
    if summary:
        sections.append(f"## What this is\n\n{summary}")
    layout = layout_lines(root)
    if layout:
        sections.append("## Layout\n\n" + "\n".join(layout))
    commands = command_lines(root)
    if commands:
        sections.append("## Commands\n\n" + "\n".join(commands))
    tools = tool_lines(root)
    if tools:
        sections.append("## Conventions\n\n" + "\n".join(tools))
    sections.append(
        "## Working here\n\n"
        "- Read the code around a change before making it; keep changes small and focused.\n"
        "- Run the tests that cover what you changed before calling it done.\n"
        "- Add here what an agent should know: how to run one test, naming and style rules, "
        "files never to edit, where secrets must not go."
    )
    return "\n\n".join(sections) + "\n"


def write(root: Path, text: str) -> Path:
    """Write ``AGENTS.md`` at ``root`` (atomically); returns its path."""
    path = root / FILE_NAME
    atomic_write(path, text)
    return path


def readme_summary(root: Path, limit: int = 600) -> str:
    """The first paragraph of prose in the README (no headings, badges or HTML)."""
    for name in ("README.md", "README.rst", "README.txt", "README"):
        path = root / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[:20_000]
        except OSError:
            continue
        for block in re.split(r"\n\s*\n", text):
            lines = [ln.strip() for ln in block.strip().splitlines()]
            prose = [
                ln
                for ln in lines
                if ln and not ln.startswith(("#", "[!", "![", "<", "=", "-" * 3, "```", "|"))
            ]
            if prose and len(prose) == len(lines):
                paragraph = " ".join(prose)
                return paragraph if len(paragraph) <= limit else paragraph[: limit - 1] + "…"
    return ""


def layout_lines(root: Path) -> list[str]:
    """One line per top-level folder: its file count and main languages."""
    counts: dict[str, Counter[str]] = {}
    files: dict[str, int] = {}
    seen = 0
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs if d not in SKIP and not d.startswith(".") and not d.endswith("-info")
        )
        rel = Path(top).relative_to(root)
        if rel == Path("."):
            continue
        head = rel.parts[0]
        files[head] = files.get(head, 0) + len(names)
        counter = counts.setdefault(head, Counter())
        counter.update(LANGUAGES[s] for s in (Path(n).suffix for n in names) if s in LANGUAGES)
        seen += len(names)
        if seen > MAX_FILES:
            break
    lines = []
    for head in sorted(files):
        languages = ", ".join(lang for lang, _ in counts[head].most_common(3))
        what = f"{files[head]} files" + (f", {languages}" if languages else "")
        lines.append(f"- `{head}/`: {what}")
    return lines


def command_lines(root: Path) -> list[str]:
    """The commands the build files define, as ``- `command`: what it does`` lines."""
    lines = make_targets(root / "Makefile")
    lines += npm_scripts(root / "package.json")
    lines += python_commands(root)
    if (root / "Cargo.toml").is_file():
        lines += ["- `cargo build`: build", "- `cargo test`: run the tests"]
    if (root / "go.mod").is_file():
        lines += ["- `go build ./...`: build", "- `go test ./...`: run the tests"]
    lines += just_recipes(root)
    return lines


def make_targets(path: Path) -> list[str]:
    """Makefile targets, with their ``## help`` comment when they have one."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for match in re.finditer(r"^([A-Za-z0-9][\w.-]*):(?!=)[^\n#]*(?:##\s*(.*))?$", text, re.M):
        target, comment = match.group(1), (match.group(2) or "").strip()
        if target.startswith(".") or target in ("PHONY",):
            continue
        out.append(f"- `make {target}`" + (f": {comment}" if comment else ""))
    return out[:20]


def npm_scripts(path: Path) -> list[str]:
    """``npm run`` scripts of ``package.json``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return []
    items: dict[str, Any] = scripts
    return [f"- `npm run {name}`: `{cmd}`" for name, cmd in list(items.items())[:20]]


def python_commands(root: Path) -> list[str]:
    """What ``pyproject.toml`` says: the package, its scripts, pytest when it has tests."""
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out = []
    scripts = _table(_table(data, "project"), "scripts")
    for name in list(scripts)[:10]:
        out.append(f"- `{name}`: the package's command ({scripts[name]})")
    if "pytest" in _table(data, "tool") or (root / "tests").is_dir():
        out.append("- `python -m pytest`: run the tests")
    return out


def just_recipes(root: Path) -> list[str]:
    """``just`` recipes of a justfile."""
    for name in ("justfile", "Justfile", ".justfile"):
        try:
            text = (root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        recipes = re.findall(r"^([A-Za-z0-9][\w-]*)(?:\s+[^:\n]*)?:(?!=)", text, re.M)
        return [f"- `just {r}`" for r in recipes[:20]]
    return []


def tool_lines(root: Path) -> list[str]:
    """The linters, formatters and checkers the repository configures."""
    found: dict[str, str] = {}
    for name, tool in TOOLS.items():
        if (root / name).exists():
            found.setdefault(tool, name)
    try:
        pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pyproject = {}
    sections = _table(pyproject, "tool")
    for tool in ("ruff", "black", "mypy", "pyright", "isort", "pytest"):
        if tool in sections:
            found.setdefault(tool, "pyproject.toml")
    return [f"- {tool} (configured in `{where}`)" for tool, where in sorted(found.items())]


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is a table, else an empty one (a file may say anything)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}
