from __future__ import annotations

from django import forms

from projects.api.serializers.forms import FormBackedSerializer
from projects.models import Tag


class TagForm(forms.ModelForm):
    """What the admin's tag page edits (it uses Django's default form)."""

    class Meta:
        model = Tag
        fields = ["name", "color"]


class TagSerializer(FormBackedSerializer):
    form_class = TagForm

    class Meta:
        model = Tag
        fields = ["id", "name", "color"]
        read_only_fields = ["id"]
