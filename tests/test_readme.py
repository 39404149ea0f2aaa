"""Every shell, console, yaml, toml and json snippet in the README runs as written.

Snippets are found by their fence, whatever section they are in. Shell lines run with bash in
a scratch copy of this repository (a git repository with an `origin`), with gate's environment
first on PATH; `make TARGET` runs as `make -n TARGET`. The pre-commit configuration runs with
`pre-commit run`; the CI job's gate commands run with its `env:` evaluated for a push and a pull
request. Python snippets are fragments of code, and text blocks are output: neither is run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import BUGGY, write

from gate.config import load_config

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(?P<language>[\w-]*)\n(?P<body>.*?)^```$", re.M | re.S)
SHELL = {"sh", "bash", "shell"}
KNOWN = SHELL | {"console", "yaml", "toml", "json", "python", "text"}


@dataclass(frozen=True)
class Snippet:
    language: str
    text: str
    line: int  # of the README line the snippet starts on

    def __str__(self) -> str:
        return f"README.md:{self.line}"


def snippets(language: str | None = None) -> list[Snippet]:
    text = README.read_text(encoding="utf-8")
    found = [
        Snippet(match["language"], match["body"], text.count("\n", 0, match.start("body")) + 1)
        for match in FENCE.finditer(text)
    ]
    return [snippet for snippet in found if language is None or snippet.language == language]


@dataclass(frozen=True)
class Command:
    where: str
    line: str


def shell_commands() -> list[Command]:
    commands = []
    for snippet in snippets():
        if snippet.language not in SHELL:
            continue
        for offset, line in enumerate(snippet.text.splitlines()):
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(Command(f"README.md:{snippet.line + offset}", line.strip()))
    return commands


def test_every_snippet_is_of_a_kind_this_test_knows() -> None:
    found = snippets()
    assert len(found) >= 10
    unknown = [
        f"{snippet} ```{snippet.language}" for snippet in found if snippet.language not in KNOWN
    ]
    assert unknown == [], "teach tests/test_readme.py to run these, or give them a language"


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "COLUMNS")}
    return {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "NO_COLOR": "1", **extra}


def run(command: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=environment(**extra),
        capture_output=True,
        text=True,
        timeout=600,
    )


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch copy of this repository's working tree (tracked and untracked, not ignored),
    committed on `main`, with itself as `origin` so that `origin/main` exists."""
    copy = tmp_path_factory.mktemp("readme") / "gate"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    git(copy, "init", "-q", "-b", "main")
    git(copy, "config", "user.email", "t@example.invalid")
    git(copy, "config", "user.name", "t")
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "copy")
    git(copy, "remote", "add", "origin", str(copy))
    git(copy, "fetch", "-q", "origin")
    return copy


@pytest.mark.parametrize("command", shell_commands(), ids=lambda c: f"{c.where} {c.line}")
def test_shell_line_runs_as_written(checkout: Path, command: Command) -> None:
    line = command.line
    if line.startswith("make "):  # the recipe is checked, not run (it builds a virtualenv)
        line = "make -n " + line.removeprefix("make ")
    completed = run(line, checkout)
    output = completed.stdout + completed.stderr
    # 0 clean, 1 findings or failing seams; 2 is a usage or config error
    assert completed.returncode in (0, 1), f"{command.where}: `{command.line}`\n{output}"
    assert "Traceback" not in output and "error:" not in completed.stderr, output


def console_sessions() -> Iterator[tuple[Snippet, str, str]]:
    """(snippet, command, the output shown after it) for every `$ ` line of a console block."""
    for snippet in snippets("console"):
        for block in re.split(r"^\$ ", snippet.text, flags=re.M)[1:]:
            command, _, shown = block.partition("\n")
            yield snippet, command, shown


def test_console_output_is_what_gate_prints(checkout: Path) -> None:
    # The pytest session runs a test file the README shows in a python block, not one in the
    # repository: tests/test_harness_marker.py runs that example exactly and checks the output.
    sessions = [s for s in console_sessions() if not s[1].startswith("pytest ")]
    assert sessions, "the README shows no console session"
    for snippet, command, shown in sessions:
        completed = run(command, checkout)
        assert completed.stdout == shown, f"{snippet}: `{command}` prints:\n{completed.stdout}"


# -- toml


def test_toml_snippets_are_valid_configuration(tmp_path: Path) -> None:
    tomls = snippets("toml")
    assert tomls
    for index, snippet in enumerate(tomls):
        project = tmp_path / str(index)
        config = write(project / "pyproject.toml", snippet.text)
        if "[tool.gate" in snippet.text:
            load_config(config, project)  # raises ConfigError naming the key
        elif "[tool.ruff" in snippet.text:
            check_ruff_accepts_gate_noqa(project)
        else:
            pytest.fail(f"{snippet}: a toml snippet for neither gate nor ruff")


def check_ruff_accepts_gate_noqa(project: Path) -> None:
    """ruff with the snippet as its config accepts `# noqa: GATE100`; without it, it does not."""
    write(project / "job.py", "x = 1  # noqa: GATE100\n")
    argv = [str(BIN / "ruff"), "check", "--no-cache", "--preview", "--select", "RUF102", "job.py"]
    configured = subprocess.run(argv, cwd=project, capture_output=True, text=True)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    (project / "pyproject.toml").unlink()
    bare = subprocess.run(argv, cwd=project, capture_output=True, text=True)
    assert bare.returncode == 1 and "GATE100" in bare.stdout  # the check can fail


# -- json


def test_json_snippets_have_the_shape_gate_prints(checkout: Path) -> None:
    jsons = snippets("json")
    assert jsons
    printed = json.loads(run("gate check examples/ --format json", checkout).stdout)
    for snippet in jsons:
        document = json.loads(snippet.text)
        if "ruff-findings" in document:  # the findings baseline, as gate writes it
            from gate.document import read_document
            from gate.findings_baseline import FindingsBaseline, render

            assert render(read_document(FindingsBaseline, document)) == snippet.text, snippet
            continue
        assert document["version"] == printed["version"], snippet
        assert set(document) == set(printed), snippet
        assert set(document["findings"][0]) == set(printed["findings"][0]), snippet
        related = document["findings"][0]["related"][0]
        assert set(related) == set(printed["findings"][0]["related"][0]), snippet
        assert set(document["summary"]) == set(printed["summary"]), snippet


# -- yaml: the pre-commit configuration and the CI job


def yaml_snippets(kind: str) -> list[tuple[Snippet, dict]]:
    found = []
    for snippet in snippets("yaml"):
        document = yaml.safe_load(snippet.text)
        if not isinstance(document, dict) or not ({"repos", "jobs"} & set(document)):
            pytest.fail(f"{snippet}: a yaml snippet that is neither pre-commit's nor CI's")
        if kind in document:
            found.append((snippet, document))
    return found


def published_hooks() -> dict[str, dict]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {hook["id"]: hook for hook in hooks}


def check_hooks_match_the_published_ones(snippet: Snippet, config: dict) -> None:
    published = published_hooks()
    for repo in config["repos"]:
        for hook in repo["hooks"]:
            assert hook["id"] in published, f"{snippet}: no published hook {hook['id']}"
            if repo["repo"] != "local":
                continue
            for key, default in (
                ("entry", None),
                ("types_or", None),
                ("pass_filenames", True),
                ("require_serial", False),
            ):
                expected = published[hook["id"]].get(key, default)
                assert hook.get(key, default) == expected, f"{snippet}: {hook['id']}.{key}"
        if repo["repo"] not in ("local", "meta"):
            tags = subprocess.run(["git", "tag"], cwd=ROOT, capture_output=True, text=True)
            rev = str(repo["rev"])
            assert re.fullmatch(r"[0-9a-f]{40}", rev) or rev in tags.stdout.split(), (
                f"{snippet}: rev {rev} is neither a commit hash nor a tag of this repository"
            )


def pre_commit_run(config: Path, repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "pre-commit"), "run", "--all-files", "--config", str(config)],
        cwd=repo,
        env=environment(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never"),
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_pre_commit_snippet_runs_as_written(checkout: Path, tmp_path: Path) -> None:
    configs = yaml_snippets("repos")
    assert configs, "the README shows no .pre-commit-config.yaml"
    from pre_commit.clientlib import load_config as load_pre_commit_config

    for snippet, config in configs:
        path = write(tmp_path / "pre-commit-config.yaml", snippet.text)
        load_pre_commit_config(str(path))  # pre-commit's own schema
        check_hooks_match_the_published_ones(snippet, config)
        if any(repo["repo"] != "local" for repo in config["repos"]):
            continue  # it names a repository that does not exist here; checked above
        # on this repository: gate's own tree passes every hook
        passing = pre_commit_run(path, checkout, tmp_path / "home")
        assert passing.returncode == 0, f"{snippet}\n{passing.stdout}{passing.stderr}"
        # on a project with a teardown bug: the hooks really run gate, and it fails
        project = tmp_path / "project"
        write(project / "job.py", BUGGY)
        git(project, "init", "-q")
        git(project, "add", "-A")
        failing = pre_commit_run(path, project, tmp_path / "home")
        assert failing.returncode == 1, f"{snippet}\n{failing.stdout}{failing.stderr}"
        assert "job.py:6:9: GATE100" in failing.stdout


EXPRESSION = re.compile(r"\$\{\{\s*(?P<expression>.*?)\s*\}\}")


def evaluate(value: str, github: dict[str, str]) -> str:
    """A workflow value with its `${{ a || 'b' }}` expressions evaluated (contexts: github)."""

    def operand(text: str) -> str:
        text = text.strip()
        if text[:1] in ("'", '"'):
            return text[1:-1]
        if text.startswith("github."):
            return github.get(text.removeprefix("github."), "")
        pytest.fail(f"an expression this test cannot evaluate: {text}")

    def replace(match: re.Match[str]) -> str:
        operands = [operand(part) for part in match["expression"].split("||")]
        return next((value for value in operands if value), "")

    return EXPRESSION.sub(replace, value)


EVENTS = {
    "push": {"event_name": "push", "base_ref": "", "ref_name": "main"},
    "pull_request": {"event_name": "pull_request", "base_ref": "main", "head_ref": "topic"},
}


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_ci_snippet_gate_commands_run_on_push_and_pull_request(checkout: Path, event: str) -> None:
    jobs = yaml_snippets("jobs")
    assert jobs, "the README shows no CI job"
    ran = 0
    for snippet, workflow in jobs:
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                if "run" not in step:
                    continue
                env = {**job.get("env", {}), **step.get("env", {})}
                env = {key: evaluate(str(value), EVENTS[event]) for key, value in env.items()}
                for line in str(step["run"]).splitlines():
                    command = line.split("|")[0].strip()  # the part before a pipe to reviewdog
                    if not command.startswith("gate "):
                        continue
                    used = set(re.findall(r"\$\{?(\w+)", command))
                    assert used <= set(env), f"{snippet}: `{command}` uses unset {used - set(env)}"
                    completed = run(evaluate(command, EVENTS[event]), checkout, **env)
                    assert completed.returncode == 0, (
                        f"{snippet} ({event}): `{command}` with {env} exited "
                        f"{completed.returncode}\n{completed.stdout}{completed.stderr}"
                    )
                    ran += 1
    assert ran >= 2


def test_an_unguarded_base_ref_is_caught_on_push(checkout: Path) -> None:
    # what the README's CI snippet once said: on a push, base_ref is empty and --diff gets
    # "origin/", a usage error; the test above runs every event, so it would see this
    command = evaluate('gate check --diff "origin/${{ github.base_ref }}"', EVENTS["push"])
    assert command == 'gate check --diff "origin/"'
    assert run(command, checkout).returncode == 2
    guarded = evaluate(
        "gate check --diff \"origin/${{ github.base_ref || 'main' }}\"", EVENTS["push"]
    )
    assert run(guarded, checkout).returncode == 0


def test_shell_lines_are_commands_not_placeholders() -> None:
    # `gate check [PATHS...]` is a synopsis, not a command: the README's shell lines must run
    for command in shell_commands():
        words = shlex.split(command.line, comments=True)
        assert not any(re.fullmatch(r"\[[A-Z.]+\]|<\w+>", word) for word in words), command
