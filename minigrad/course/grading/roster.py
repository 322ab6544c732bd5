"""The course's roster: who is enrolled, under which login, name, SIS id and section.

``minigrad-grade submissions/ --roster roster.csv`` reads either

* a CSV with a header naming some of ``login`` (or ``username``, ``user``), ``name`` (or
  ``student``, ``full name``), ``sis id`` (or ``sis_id``, ``id number``), ``section``, ``id``
  (a Canvas user id), in any order and case; or
* a Canvas gradebook export as it is (``Student, ID, SIS User ID, SIS Login ID, Section, …``;
  its ``Points Possible`` row and Canvas's ``Student, Test`` are left out).

Each submission's identity (:func:`.submissions.parse_name`) is matched to one student: by
Canvas user id, then by login, then by name (Moodle's full name, or Canvas's ``lastfirst``);
the student is then named by the roster's login (else SIS id, else Canvas id). A submission
that matches nobody keeps its identity and gets an issue ("not on roster"); a name that fits
two students matches neither; a roster student who handed in nothing is listed in the report.
"""
from __future__ import annotations

import csv
import dataclasses
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, TypeVar

if TYPE_CHECKING:
    from .submissions import Submission

_K = TypeVar("_K")
_V = TypeVar("_V")

__all__ = ["Roster", "Enrolled", "RosterError", "read_roster"]

_COLUMNS = {
    "login": ("login", "username", "user name", "user", "sis login id", "login id", "email"),
    "name": ("name", "student", "full name", "student name"),
    "sis_id": ("sis id", "sis_id", "sis user id", "id number", "student id", "sisid"),
    "section": ("section", "sections", "group"),
    "canvas_id": ("id", "canvas id", "user id"),
}


class RosterError(ValueError):
    """The roster file cannot be read; the message says what was expected and what came."""


@dataclass(frozen=True)
class Enrolled:
    """One student of the roster."""

    login: str = ""
    name: str = ""
    sis_id: str = ""
    section: str = ""
    canvas_id: str = ""

    @property
    def key(self) -> str:
        """What the report calls this student: the login, else the SIS id, else the Canvas id."""
        return self.login or self.sis_id or self.canvas_id or self.name


def _fold(text: str) -> str:
    """Lower case, accents and punctuation gone: ``"Doe-Smith, Zoë"`` -> ``"doe smith zoe"``."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def _tokens(name: str) -> frozenset[str]:
    return frozenset(_fold(name).split())


def _lastfirst(name: str) -> str:
    """Canvas's login-like name of a full name: ``"Doe, Jane"`` or ``"Jane Doe"`` -> ``"doejane"``."""
    if "," in name:
        last, _, first = name.partition(",")
    else:
        parts = name.split()
        last, first = (parts[-1], " ".join(parts[:-1])) if parts else ("", "")
    return (_fold(last) + _fold(first)).replace(" ", "")


class Roster:
    """The enrolled students, with look-ups by Canvas id, login and name."""

    def __init__(self, students: Iterable[Enrolled], source: str = "") -> None:
        self.students = list(students)
        self.source = source
        self._by_id = _unique((s.canvas_id, s) for s in self.students if s.canvas_id)
        self._by_login = _unique((_fold(s.login), s) for s in self.students if s.login)
        self._by_login.update(_unique((_fold(s.sis_id), s) for s in self.students
                                      if s.sis_id and _fold(s.sis_id) not in self._by_login))
        self._by_tokens = _unique((_tokens(s.name), s) for s in self.students if s.name)
        self._by_lastfirst = _unique((_lastfirst(s.name), s) for s in self.students if s.name)

    def __len__(self) -> int:
        return len(self.students)

    def match(self, student: str, *, user_id: str = "", login: str = "") -> Enrolled | None:
        """The enrolled student an identity names, or None (none, or more than one, fits)."""
        tables: tuple[tuple[dict[Any, Enrolled], object], ...] = (
            (self._by_id, user_id), (self._by_login, _fold(login)),
            (self._by_login, _fold(student)), (self._by_tokens, _tokens(student)),
            (self._by_lastfirst, _fold(login).replace(" ", "")))
        for table, key in tables:
            if key and key in table:
                return table[key]
        return None

    def attribute(self, submission: "Submission") -> "Submission":
        """``submission`` named as the roster's student, or with a note that nobody matched."""
        enrolled = self.match(submission.student, user_id=submission.user_id,
                              login=submission.login)
        if enrolled is None:
            return dataclasses.replace(submission, note=(
                f"{submission.student} is not on the roster ({self.source or 'the roster'}): "
                "no login, id or name there matches"))
        return dataclasses.replace(submission, student=enrolled.key, name=enrolled.name,
                                   section=enrolled.section)

    def people(self) -> dict[str, dict[str, str]]:
        """``{key: {"name", "section", "sis_id"}}`` for every enrolled student."""
        return {s.key: {"name": s.name, "section": s.section, "sis_id": s.sis_id}
                for s in self.students}


def _unique(pairs: Iterable[tuple[_K, _V]]) -> dict[_K, _V]:
    """A dict of the pairs whose key occurs once (an ambiguous key matches nobody)."""
    table: dict[_K, _V] = {}
    clashes = set()
    for key, value in pairs:
        if key in table and table[key] != value:
            clashes.add(key)
        table[key] = value
    for key in clashes:
        del table[key]
    return table


def read_roster(path: str | os.PathLike[str]) -> Roster:
    """Read a roster CSV (see the module's docstring for the columns it understands).

    Raises
    ------
    RosterError
        When the file is missing, not a CSV with a header, or has none of the columns that
        identify a student.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"--roster {path}: cannot read it ({exc})") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise RosterError(f"--roster {path}: the file is empty; expected a CSV with a header "
                          "such as login,name,sis id,section (or a Canvas gradebook export)")
    header = [_fold(h) for h in rows[0]]
    where: dict[str, int] = {}
    for field, names in _COLUMNS.items():
        for name in names:
            if _fold(name) in header:
                where[field] = header.index(_fold(name))
                break
    if not {"login", "sis_id", "canvas_id", "name"} & set(where):
        raise RosterError(f"--roster {path}: expected a column login (or username, SIS Login "
                          f"ID), name, SIS id or ID; got the columns {rows[0]}")
    students = []
    for row in rows[1:]:
        values = {field: row[i].strip() if i < len(row) else "" for field, i in where.items()}
        if not any(values.values()):
            continue
        name = values.get("name", "")
        if _fold(name).startswith("points possible") or _fold(name) in ("student test",
                                                                       "test student"):
            continue   # Canvas's gradebook: the points row and its test student
        students.append(Enrolled(**values))
    return Roster(students, source=path.name)
