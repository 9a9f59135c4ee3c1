from __future__ import annotations

import itertools

import pytest

from projects.models import Project

_names = itertools.count(1)


@pytest.fixture
def make_project(db):
    """Create a saved, valid Project; keyword arguments override fields."""

    def make(**fields) -> Project:
        number = next(_names)
        fields.setdefault("name", f"project {number}")
        fields.setdefault("url", f"http://127.0.0.1:9/{number}")
        project = Project(**fields)
        project.full_clean()
        project.save()
        return project

    return make
