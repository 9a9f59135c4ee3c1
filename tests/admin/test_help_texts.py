"""Django prints a model field's help_text into the admin's HTML as it is
(its documented contract: help text is HTML), so a bare "<" or "&" in one
is an HTML parse error (html5lib's `expected-tag-name`). Every help text
of the product's models is well-formed HTML text."""

from __future__ import annotations

import re

import pytest

from django.apps import apps

from tests.support.admin_forms import ADD_URL

# "<" that opens no tag, "&" that starts no character reference.
BARE = re.compile(r"<(?![A-Za-z/!])|&(?!#?[A-Za-z0-9]+;)")


def help_texts() -> list[tuple[str, str]]:
    return [
        (f"{model.__name__}.{field.name}", str(field.help_text))
        for model in apps.get_app_config("projects").get_models()
        for field in model._meta.get_fields()
        if getattr(field, "help_text", "")
    ]


def test_no_help_text_has_a_bare_less_than_or_ampersand():
    texts = help_texts()
    assert len(texts) > 20

    bare = [name for name, text in texts if BARE.search(text)]

    assert bare == []


@pytest.mark.django_db
def test_the_json_expected_help_reads_as_text_on_the_admin_page(admin_client):
    html = admin_client.get(ADD_URL).content.decode()

    assert "null. &lt; and &gt; compare numbers" in html
    assert "null. < and > compare" not in html
