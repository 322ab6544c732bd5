"""The project's own files agree: pyproject and environment.yml, the version, the licence."""
from __future__ import annotations

import pathlib
import re
import tomllib

import minigrad

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _spec(requirement: str) -> str:
    return requirement.strip()[len(_name(requirement)):].replace(" ", "")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _environment() -> dict[str, str]:
    """Package name -> version spec from environment.yml (conda and pip sections alike)."""
    specs = {}
    text = (ROOT / "environment.yml").read_text()
    text = text[text.index("dependencies:"):]
    for line in text.splitlines():
        item = line.strip()
        if not item.startswith("- ") or item.endswith(":"):
            continue
        item = item[2:].strip()
        if item.startswith("-e") or item in {"pip", "python>=3.10"}:
            continue
        specs[_name(item)] = _spec(item)
    return specs


def test_environment_yml_matches_pyproject():
    project = _pyproject()["project"]
    wanted = list(project["dependencies"])
    extras = project["optional-dependencies"]
    wanted += extras["course"] + extras["grade"] + extras["onnx"]
    wanted += [r for r in extras["dev"] if not r.startswith("minigrad-course")]
    wanted = list(dict.fromkeys(wanted))
    env = _environment()
    missing = [r for r in wanted if _name(r) not in env]
    assert not missing, f"environment.yml lacks {missing}"
    differ = [(r, env[_name(r)]) for r in wanted if env[_name(r)] != _spec(r)]
    assert not differ, f"version specs differ (pyproject, environment.yml): {differ}"
    extra = set(env) - {_name(r) for r in wanted}
    assert not extra, f"environment.yml has packages pyproject does not: {extra}"


def test_torch_only_in_the_bench_extra():
    project = _pyproject()["project"]
    assert not any(_name(r) == "torch" for r in project["dependencies"])
    for extra, reqs in project["optional-dependencies"].items():
        if extra != "bench":
            assert not any(_name(r) == "torch" for r in reqs), extra
    assert "torch==2.13.0" in project["optional-dependencies"]["bench"]


def test_version_and_licence():
    assert minigrad.__version__ == _pyproject()["project"]["version"]
    assert (ROOT / "minigrad" / "py.typed").exists()
    licence = (ROOT / "LICENSE").read_text()
    assert "MIT License" in licence and "CC BY 4.0" in licence
