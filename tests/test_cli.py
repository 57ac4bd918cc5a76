"""The command line: the documented commands work, bad input exits non-zero with a message."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpnoise.cli import main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dpnoise", *args], capture_output=True,
                          text=True, timeout=120)


def test_help_lists_commands() -> None:
    out = run("--help")
    assert out.returncode == 0
    for cmd in ("release", "verify", "demo", "reproduce"):
        assert cmd in out.stdout


def test_release_laplace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "laplace", "--epsilon", "1", "--sensitivity", "1", "42"]) == 0
    out = capsys.readouterr().out
    assert "1-DP" in out and "42 ->" in out


def test_release_json_is_reproducible_with_seed(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["release", "laplace", "--epsilon", "1", "--seed", "7", "--json", "1", "2"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert first == second
    assert first["guarantee"]["epsilon"] == 1.0
    assert [r["true"] for r in first["releases"]] == [1.0, 2.0]


def test_verify_laplace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "laplace", "--epsilon", "1", "--sensitivity", "1"]) == 0
    assert "PASS" in capsys.readouterr().out


def test_verify_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "laplace", "--epsilon", "0.5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is True and report["verified_epsilon"] <= 0.5


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["release", "laplace", "--epsilon", "-1", "3"], "epsilon must be in [1e-05, 1000]"),
        (["release", "laplace", "--epsilon", "1", "--sensitivity", "0", "3"], "sensitivity"),
        (["release", "laplace", "--epsilon", "1", "nan"], "finite"),
        (["release", "clamped-laplace", "--epsilon", "1", "--lower", "0", "--upper", "1", "5"],
         "declared range"),
    ],
)
def test_bad_input_exits_nonzero(args: list[str], needle: str) -> None:
    out = run(*args)
    assert out.returncode == 2
    assert needle in out.stderr and out.stdout == ""


@pytest.mark.slow  # runs the whole demo: no privacy check here
def test_demo_runs() -> None:
    out = run("demo", "--seed", "1")
    assert out.returncode == 0, out.stderr
    assert "respondents" in out.stdout


def test_progress_is_silent_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from dpnoise.progress import progress

    assert list(progress(range(5), total=5, desc="x")) == [0, 1, 2, 3, 4]
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
