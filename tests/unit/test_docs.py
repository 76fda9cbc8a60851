"""The docs tell the truth the code can check: every flag named for a `nexmark` command is in that
command's `--help`, every quoted schema version is the code's, every benchmark script's flag and
option value quoted exists in that script, every link between pages and to a heading resolves,
and reference pages (README.md, docs/*.md; not docs/notes/) speak in the present tense: no issue
numbers, no commit hashes.

No JVM: the Typer app is asked for its commands in process, the benchmark scripts are read as
source (their argparse calls), never run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import typer.main
from typer.testing import CliRunner

from nexmark.cli.app import app
from nexmark.results.document import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOTES = DOCS / "notes"
BENCHMARKS = ROOT / "benchmarks"

# Flags of other tools that the pages name, with the tool: nothing of ours defines them.
FOREIGN_FLAGS = {
    "--taskmanagers": "python -m nexmark.engines.flink.start_cluster",
    "--slots": "python -m nexmark.engines.flink.start_cluster",
    "--host": "Spark's Master class",
    "--port": "Spark's Master class",
    "--cores": "Spark's Worker class",
    "--memory": "Spark's Worker class",
    "--durations": "pytest",
    "--force": "kubectl delete pod",
    "--grace-period": "kubectl delete pod",
    "--add-opens": "java",
    "--add-modules": "java",
    "--quiet": "nexmark's root option (also pip's)",
    "--version": "nexmark's root option",
}

# A commit hash a reference page may carry: the upstream reference runner's commit it was read at
# (docs/reference.md), not this project's history.
UPSTREAM_COMMITS = {"6b3646c"}


def reference_pages() -> list[Path]:
    """The pages that describe the runner as it is: README.md and docs/*.md (not docs/notes/)."""
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def all_pages() -> list[Path]:
    return [*reference_pages(), *sorted(NOTES.glob("*.md"))]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# ---- Markdown, read just enough --------------------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Segment:
    """A piece of code a page quotes: an inline code span, or a code block's command (its
    continuation lines joined), with the paragraph it sits in (for prose context)."""

    page: Path
    line: int
    text: str
    paragraph: int


def segments(page: Path) -> list[Segment]:
    out: list[Segment] = []
    lines = page.read_text().splitlines()
    in_fence = False
    paragraph = 0
    pending: tuple[int, str] | None = None  # a code block line ending in a backslash
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
            paragraph += 1
            continue
        if in_fence or (line.startswith("    ") and not line.lstrip().startswith(("-", "|"))):
            if pending:
                start, text = pending
                text += " " + line.strip()
            else:
                start, text = number, line.strip()
            if text.endswith("\\"):
                pending = (start, text[:-1])
                continue
            pending = None
            out.append(Segment(page, start, text, paragraph))
            continue
        if not line.strip():
            paragraph += 1
            continue
        for match in re.finditer(r"(`+)(.+?)\1", line):
            out.append(Segment(page, number, match.group(2), paragraph))
    return out


def prose_lines(page: Path) -> list[tuple[int, str]]:
    """Every line outside fenced code blocks (inline code included)."""
    out = []
    in_fence = False
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.append((number, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup dropped, every character but letters,
    digits, spaces, hyphens and underscores removed, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    in_fence = False
    for line in page.read_text().splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if in_fence or not match:
            continue
        base = slug(match.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


# ---- What the code defines -------------------------------------------------------------------


@cache
def command_flags() -> dict[str, frozenset[str]]:
    """Each `nexmark` command's flags as its `--help` lists them (hidden options left out),
    keyed 'run', 'dataset verify', ...; '' holds the root's."""
    group = typer.main.get_command(app)
    out: dict[str, frozenset[str]] = {}

    def visible(command) -> frozenset[str]:  # Typer's own click: no import of click needed
        flags = {"--help"}
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                flags.update(param.opts + param.secondary_opts)
        return frozenset(flags)

    out[""] = visible(group)
    for name, command in group.commands.items():
        out[name] = visible(command)
        if hasattr(command, "commands"):
            for sub, subcommand in command.commands.items():
                out[f"{name} {sub}"] = visible(subcommand)
    return out


@dataclass(frozen=True)
class Script:
    """A benchmark script's command line, read from its argparse calls: each flag and, where
    the script defines them, the values it takes (argparse choices, or a module-level dict named
    after the option: --variants takes the keys of VARIANTS)."""

    flags: frozenset[str]
    values: dict[str, frozenset[str]]


@cache
def scripts() -> dict[str, Script]:
    out = {}
    for path in sorted(BENCHMARKS.glob("*.py")):
        tree = ast.parse(path.read_text())
        constants: dict[str, frozenset[str]] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict | ast.Tuple):
                keys = node.value.keys if isinstance(node.value, ast.Dict) else node.value.elts
                names = [k.value for k in keys if isinstance(k, ast.Constant)]
                for target in node.targets:
                    if isinstance(target, ast.Name) and names:
                        constants[target.id] = frozenset(map(str, names))
        flags: set[str] = set()
        values: dict[str, frozenset[str]] = {}
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"
            ):
                continue
            opts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            flags.update(o for o in opts if isinstance(o, str) and o.startswith("-"))
            long = next((o for o in opts if isinstance(o, str) and o.startswith("--")), None)
            if long is None:
                continue
            choices = next((k.value for k in node.keywords if k.arg == "choices"), None)
            if isinstance(choices, ast.Call) and choices.args:  # sorted(MODES)
                choices = choices.args[0]
            if isinstance(choices, ast.Tuple | ast.List):
                values[long] = frozenset(str(e.value) for e in choices.elts)
            elif isinstance(choices, ast.Name) and choices.id in constants:
                values[long] = constants[choices.id]
            elif long[2:].replace("-", "_").upper() in constants:
                values[long] = constants[long[2:].replace("-", "_").upper()]
        if flags:
            out[path.name] = Script(frozenset(flags), values)
    return out


# ---- The checks ------------------------------------------------------------------------------

FLAG = re.compile(r"(?<![\w/.=-])(--?[a-zA-Z][\w-]*)")
COMMAND = re.compile(r"(?:^|[\s/])nexmark((?:\s+--?[a-z][\w-]*)*)\s+([a-z]+)(?:\s+([a-z]+))?")
SCRIPT = re.compile(r"(\w+\.py)\b")


def command_problems(page: Path) -> list[str]:
    """A `nexmark <command> ...` quoted in code: each flag after it must be the command's."""
    problems = []
    known = command_flags()
    for seg in segments(page):
        for match in COMMAND.finditer(seg.text):
            root_flags, name, sub = match.group(1), match.group(2), match.group(3)
            if name not in known:
                continue  # `nexmark` as a word in a shell line, not a command
            command = f"{name} {sub}" if sub and f"{name} {sub}" in known else name
            rest = seg.text[match.end(2 if command == name else 3) :]
            rest = re.split(r"[|;#)]|&&|\bnexmark\b", rest)[0]
            for flag in FLAG.findall(root_flags):
                if flag not in known[""]:
                    problems.append(f"{rel(page)}:{seg.line}: `nexmark {flag}` is no root option")
            for flag in FLAG.findall(rest):
                if flag not in known[command]:
                    problems.append(
                        f"{rel(page)}:{seg.line}: `nexmark {command}` has no {flag} "
                        f"(not in `nexmark {command} --help`)"
                    )
    return problems


def script_problems(page: Path) -> list[str]:
    """A benchmark script's flags quoted after its name (in the same code line, or later in the
    same paragraph): each flag must be the script's, each value one the script defines."""
    problems = []
    known = scripts()
    current: dict[int, str] = {}  # paragraph -> the last script named in it
    for seg in segments(page):
        named = [m for m in SCRIPT.findall(seg.text) if m in known]
        text = seg.text
        if named:
            current[seg.paragraph] = named[-1]
            text = text[text.index(named[-1]) + len(named[-1]) :]
        elif re.search(r"\bnexmark\b", text):
            continue
        script = current.get(seg.paragraph)
        if script is None:
            continue
        spec = known[script]
        for match in re.finditer(r"(?<![\w/.=-])(--?[a-zA-Z][\w-]*)(?:[ =](\S+))?", text):
            flag, value = match.group(1), match.group(2)
            if flag not in spec.flags:
                if named:
                    problems.append(f"{rel(page)}:{seg.line}: {script} has no {flag}")
                continue
            if value and flag in spec.values:
                for item in value.strip("`'\",.;:").split(","):
                    if item not in spec.values[flag]:
                        problems.append(
                            f"{rel(page)}:{seg.line}: {script} {flag} has no value {item!r} "
                            f"(it takes {', '.join(sorted(spec.values[flag]))})"
                        )
    return problems


def stray_flag_problems(page: Path) -> list[str]:
    """Any flag a page names must be defined somewhere: by a nexmark command, a benchmark
    script, or a tool listed in FOREIGN_FLAGS (catches a misspelt flag in prose)."""
    defined = set(FOREIGN_FLAGS)
    for flags in command_flags().values():
        defined |= flags
    for script in scripts().values():
        defined |= script.flags
    problems = []
    for number, line in enumerate(page.read_text().splitlines(), 1):
        line = re.sub(r"https?://\S+", "", line)
        for flag in re.findall(r"(?<![\w/.=`-])`?(--[a-zA-Z][\w-]*)", line):
            if flag not in defined:
                problems.append(f"{rel(page)}:{number}: {flag} is no flag of any command")
    return problems


def schema_problems(page: Path) -> list[str]:
    problems = []
    for number, line in enumerate(page.read_text().splitlines(), 1):
        for found in re.findall(r"\"?schema_version\"?\s*[:=]\s*(\d+)", line):
            if int(found) != SCHEMA_VERSION:
                problems.append(
                    f"{rel(page)}:{number}: schema_version {found} quoted, the code's is "
                    f"{SCHEMA_VERSION} (nexmark.results.document.SCHEMA_VERSION)"
                )
    return problems


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# A page named in code, as prose does: `docs/protocol.md#the-source-ceiling`, `state.md`.
QUOTED_PAGE = re.compile(r"`((?:docs/)?(?:notes/)?[\w.-]+\.md(?:#[\w-]+)?)`")


def link_problems(page: Path) -> list[str]:
    problems = []
    for number, line in prose_lines(page):
        targets = [(t, page.parent) for t in LINK.findall(line)]
        for quoted in QUOTED_PAGE.findall(line):
            base = ROOT if quoted.startswith(("docs/", "README")) else page.parent
            targets.append((quoted, base))
        for target, base in targets:
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            dest = (base / path).resolve() if path else page
            if not dest.exists():
                problems.append(f"{rel(page)}:{number}: link to {target}: no file {path}")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(
                    f"{rel(page)}:{number}: link to {target}: {rel(dest)} has no heading "
                    f"with the anchor #{anchor}"
                )
    return problems


HISTORY = [
    (re.compile(r"\b(?:issues?|PR|pull request)\s*#?\d+", re.I), "an issue number"),
    (re.compile(r"(?<![\w&])#\d+\b"), "an issue number"),
    (re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])"), "a commit"),
]


# Sections that tell where the work stands rather than what the runner does.
PROGRESS_HEADING = re.compile(
    r"^#+\s*(status|what remains|what exists now|what is not done yet|next steps?)\s*$", re.I
)


def history_problems(page: Path) -> list[str]:
    problems = []
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if PROGRESS_HEADING.match(line):
            problems.append(
                f"{rel(page)}:{number}: a progress section ({line.strip()!r}) in a reference "
                "page: history goes to docs/notes/"
            )
        for pattern, what in HISTORY:
            for found in pattern.findall(line):
                if found in UPSTREAM_COMMITS:
                    continue
                problems.append(
                    f"{rel(page)}:{number}: {what} ({found!r}) in a reference page: history "
                    "goes to docs/notes/"
                )
    return problems


def report(problems: list[str]) -> str:
    return "\n" + "\n".join(problems)


def test_every_flag_quoted_for_a_command_is_in_its_help():
    problems = [p for page in reference_pages() for p in command_problems(page)]
    assert not problems, report(problems)


def test_every_flag_named_anywhere_is_defined():
    problems = [p for page in reference_pages() for p in stray_flag_problems(page)]
    assert not problems, report(problems)


def test_benchmark_script_flags_and_values_exist():
    problems = [p for page in reference_pages() for p in script_problems(page)]
    assert not problems, report(problems)


def test_quoted_schema_versions_are_the_codes():
    problems = [p for page in reference_pages() for p in schema_problems(page)]
    assert not problems, report(problems)


def test_links_and_anchors_resolve():
    problems = [p for page in all_pages() for p in link_problems(page)]
    assert not problems, report(problems)


def test_reference_pages_carry_no_issue_numbers_or_commits():
    problems = [p for page in reference_pages() for p in history_problems(page)]
    assert not problems, report(problems)


def test_every_page_in_docs_is_in_the_readme_index():
    readme = (ROOT / "README.md").read_text()
    missing = [rel(p) for p in sorted(DOCS.glob("*.md")) if f"({rel(p)}" not in readme]
    assert not missing, f"docs pages the README does not link: {missing}"


def test_the_help_lists_the_flags_the_checks_use():
    """The flags above are read from the commands' declarations; their `--help` shows them."""
    runner = CliRunner()
    for command, flags in command_flags().items():
        result = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.output
        shown = set(re.findall(r"-{1,2}[a-z][\w-]*", result.output))
        assert flags <= shown, (command, sorted(flags - shown))


def test_the_checks_catch_what_they_are_for(tmp_path):
    """Each check on a page made to be wrong."""
    page = tmp_path / "wrong.md"
    page.write_text(
        "# A page\n\n"
        "```sh\nnexmark run --flink-rest-url http://jm:8081 --queries q0\n```\n\n"
        '`"schema_version": 3`; see [the ceiling](wrong.md#the-source-ceiling) and '
        "[a page](nowhere.md); fixed in issue 32.\n\n## What remains\n\n"
        "Measured with `benchmarks/bench_data_path.py --variants no-reuse`.\n"
    )
    assert any("--flink-rest-url" in p for p in command_problems(page))
    assert any("--flink-rest-url" in p for p in stray_flag_problems(page))
    assert any("schema_version 3" in p for p in schema_problems(page))
    assert len(link_problems(page)) == 2
    assert any("issue 32" in p for p in history_problems(page))
    assert any("What remains" in p for p in history_problems(page))
    assert any("'no-reuse'" in p for p in script_problems(page))
    assert slug("Flink: `--flink-rest URL`") == "flink---flink-rest-url"
    assert (
        slug("The source ceiling (protocol/calibrate.py)")
        == "the-source-ceiling-protocolcalibratepy"
    )
