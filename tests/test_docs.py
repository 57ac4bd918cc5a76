"""The documentation says what the code does: README and docs/ outputs, links, example files.

Every sample output in README.md and docs/*.md is printed by ``scripts/docs_outputs.py``;
this test reruns it and fails when any block differs from what the code prints now.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dpnoise import ParameterError
from dpnoise.cli import main
from dpnoise.examples import FILES, copy_to, path

ROOT = Path(__file__).resolve().parents[1]
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def test_every_sample_output_is_what_the_code_prints() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "docs_outputs.py"), "--check"],
                          capture_output=True, text=True, env=_env(), timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]


def test_readme_is_a_door() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    for marker in ("make demo", "make test", "<!-- BEGIN bench:summary -->",
                   "<!-- END bench:summary -->", "<!-- BEGIN output:readme-library -->",
                   "<!-- BEGIN output:readme-custodian -->"):
        assert marker in text, marker
    # every peer of the feature table
    for peer in ("OpenDP", "Tumult", "PipelineDP", "diffprivlib", "SmartNoise"):
        assert peer in text, peer


def test_sample_outputs_show_error_bars() -> None:
    """Released tables in the docs carry their low/high columns."""
    text = "\n".join(p.read_text() for p in MARKDOWN)
    blocks = re.findall(r"<!-- BEGIN output:([\w.-]+) -->\n(.*?)<!-- END", text, re.S)
    releases = [b for _, b in blocks if re.search(r"^query: ", b, re.M)]
    assert releases
    for block in releases:
        for table in block.split("\nquery: ")[1:]:  # each released table has both columns
            assert re.search(r"\blow +high\b", table), table[:400]


@pytest.mark.parametrize("md", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(md: Path) -> None:
    for target in LINK.findall(md.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file = target.split("#", 1)[0]
        assert (md.parent / file).exists(), f"{md.relative_to(ROOT)}: broken link {target}"


def test_example_files_are_shipped_and_consistent(tmp_path: Path) -> None:
    schema = tomllib.loads(path("people.toml").read_text())
    header = path("people.csv").read_text().splitlines()[0].split(",")
    ds = schema["dataset"]
    assert ds["user_id"] in header and ds["max_contributions"] >= 2
    assert ds["max_groups"] >= 1 and ds["max_rows_per_group"] >= 1
    cols = schema["columns"]
    assert any(c.get("text") for c in cols.values()), "a column whose keys are not public"
    assert any("categories" in c for c in cols.values()), "a column with public keys"
    assert set(cols) <= set(header)
    assert [p.name for p in copy_to(tmp_path)] == list(FILES)
    with pytest.raises(ParameterError, match="already exists"):
        copy_to(tmp_path)
    with pytest.raises(ParameterError, match="example file must be one of"):
        path("secret.csv")


def test_example_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example", str(tmp_path / "new")]) == 0
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == sorted(FILES)
    assert main(["example", str(tmp_path / "new")]) == 2  # refuses to overwrite
    assert "already exists" in capsys.readouterr().err
    assert main(["example", str(tmp_path / "new"), "--force"]) == 0
