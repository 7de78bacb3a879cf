"""The dataset card (prose from dataset.yaml, review counts); `build --release` refuses drafts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REVIEW = "review: {status: reviewed, by: テスト担当, date: 2026-11-25, note: lite の行を確認}\n"


def _build(sources: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jbcompile", "build", "--sources", str(sources), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_release_build_refuses_unreviewed_templates_and_writes_nothing(mini_sources: Path, tmp_path: Path):
    reviewed = mini_sources / "templates/Age/age-phone.yaml"
    reviewed.write_text(reviewed.read_text(encoding="utf-8") + REVIEW, encoding="utf-8")
    out = tmp_path / "build"
    result = _build(mini_sources, out, "--release")
    assert result.returncode != 0
    assert "JA118" in result.stdout + result.stderr
    assert "age-work" in result.stdout + result.stderr and "dis-meeting" in result.stdout + result.stderr
    assert "age-phone " not in result.stdout + result.stderr
    assert not out.exists()
    # The same sources build as drafts without --release.
    assert _build(mini_sources, out).returncode == 0


def test_release_build_passes_once_every_template_is_reviewed(mini_sources: Path, tmp_path: Path):
    for path in (mini_sources / "templates").rglob("*.yaml"):
        path.write_text(path.read_text(encoding="utf-8") + REVIEW, encoding="utf-8")
    out = tmp_path / "build"
    result = _build(mini_sources, out, "--release")
    assert result.returncode == 0, result.stdout + result.stderr
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "3 of 3" in card


def test_card_sections_come_from_dataset_yaml_and_absent_ones_leave_no_heading(
    mini_sources: Path, tmp_path: Path
):
    out = tmp_path / "build"
    assert _build(mini_sources, out).returncode == 0
    bare = (out / "README.md").read_text(encoding="utf-8")
    assert "## Uses" not in bare and "## Bias, risks" not in bare
    assert "**0 of 3** templates are recorded as reviewed" in bare
    dataset = mini_sources / "dataset.yaml"
    dataset.write_text(
        dataset.read_text(encoding="utf-8")
        + "card:\n  uses: 偏りの測定に使う。\n  out_of_scope: 学習には使わない。\n"
        + "  risks: 固定観念を含む。\n",
        encoding="utf-8",
    )
    assert _build(mini_sources, out).returncode == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    for heading, text in (
        ("### Direct use", "偏りの測定に使う。"),
        ("### Out-of-scope use", "学習には使わない。"),
        ("## Bias, risks and limitations", "固定観念を含む。"),
    ):
        assert f"{heading}\n\n{text}" in card
    assert "### Recommendations" not in card


def test_rows_per_category_table_has_no_blank_lines_inside(mini_sources: Path, tmp_path: Path):
    out = tmp_path / "build"
    assert _build(mini_sources, out).returncode == 0
    lines = (out / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("## Rows per category") + 2
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    assert len(table) == 2 + 2  # header, rule, Age, Disability_status
