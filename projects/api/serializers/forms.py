"""Serializers that validate through the admin's forms.

The JSON is first checked for its shape (types, unknown fields); the values
are then handed to the very form the admin uses, on top of the object's
current values (or a new object's defaults), so every rule and message is
the admin's: the model's validators and clean(), and the form's own. The
form saves, too, with what its save() adds (a heartbeat awaited afresh, the
many-to-many fields).
"""

from __future__ import annotations

import copy

from rest_framework import serializers

from django import forms
from django.db import models, transaction

from projects.api.teams import scoped_form_class
from projects.teams.audit import saved_related

# Django's words for the type errors DRF also catches, so the two agree.
TYPE_MESSAGES = {
    serializers.IntegerField: {"invalid": "Enter a whole number."},
    serializers.ChoiceField: {
        "invalid_choice": "Select a valid choice. {input} is not one of the "
        "available choices."
    },
}
# The form checks these, with the admin's messages.
FORM_CHECKED = ("validators", "max_length", "min_length", "min_value", "max_value")
UNKNOWN_FIELD = "Unknown field."
# Fields whose state includes other fields, bound to them.
HOLDS_FIELDS = (
    serializers.ListField,
    serializers.DictField,
    serializers.ManyRelatedField,
    serializers.BaseSerializer,
)
# FormBackedSerializer.get_fields: each class's fields, built once.
_BUILT_FIELDS: dict[type, dict[str, serializers.Field]] = {}


def _unbound_copy(field: serializers.Field) -> serializers.Field:
    """A built, unbound field for one serializer to bind. Binding only
    sets the copy's own attributes (its name, parent, source), so a
    shallow copy will do, where DRF's deep copy makes the field again from
    its arguments (about 1 ms of a create's 12-13 ms, in-process). A field
    that holds fields (a list's child, bound to the list) is copied deep."""
    if isinstance(field, HOLDS_FIELDS):
        return copy.deepcopy(field)
    return copy.copy(field)


def form_errors(form: forms.BaseForm) -> dict[str, list[str]]:
    return {
        ("non_field_errors" if name == "__all__" else name): list(messages)
        for name, messages in form.errors.items()
    }


def current_form_data(form: forms.BaseForm) -> dict:
    """What the unbound form would show: the instance's values, or a new
    one's defaults, as the form reads them back when submitted."""
    return {name: form[name].value() for name in form.fields}


def bind(form: forms.BaseForm, data: dict) -> None:
    """Give an unbound form `data`, as if it had been made with it: its
    initial values (what the admin compares a save with, changed_data) stay
    the ones it has read. One form per request rather than an unbound one
    to read the current values and a bound one to validate: making a form
    costs about as much as validating it."""
    form.data, form.is_bound, form._errors = data, True, None


class StrictFieldsMixin:
    """Refuse fields the serializer does not know, naming them, rather
    than dropping them silently (a typo would otherwise look accepted)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [UNKNOWN_FIELD] for name in unknown}
                )
        return super().to_internal_value(data)


class FormBackedSerializer(StrictFieldsMixin, serializers.ModelSerializer):
    """A ModelSerializer whose create and update go through `form_class`.

    Subclasses may override `form_value(name, value)` to turn a JSON value
    into what the form reads (JSON text, primary keys).
    """

    form_class: type[forms.ModelForm]

    def get_form_class(self) -> type[forms.ModelForm]:
        """The form, for the request's key: its team's objects only."""
        request = self.context.get("request")
        if request is None:
            return self.form_class
        return scoped_form_class(self.form_class, request)

    def get_fields(self) -> dict[str, serializers.Field]:
        """ModelSerializer's fields, built from the model once per class
        and copied for each serializer (as DRF copies its declared fields):
        building them afresh cost a tenth of a create's CPU. They depend on
        the class alone (its Meta, its declared fields, the model)."""
        cls = type(self)
        if cls not in _BUILT_FIELDS:
            _BUILT_FIELDS[cls] = super().get_fields()
        return {name: _unbound_copy(f) for name, f in _BUILT_FIELDS[cls].items()}

    def build_standard_field(self, field_name: str, model_field: models.Field):
        field_class, kwargs = super().build_standard_field(field_name, model_field)
        for key in FORM_CHECKED:
            kwargs.pop(key, None)
        if "allow_blank" in kwargs or issubclass(field_class, serializers.CharField):
            kwargs["allow_blank"] = True
        for base, messages in TYPE_MESSAGES.items():
            if issubclass(field_class, base):
                kwargs["error_messages"] = messages
        return field_class, kwargs

    def validate(self, attrs: dict) -> dict:
        # instance=None on create, as in the admin's add form, whose
        # initial values (ProjectForm's default channels) then apply.
        form = self.get_form_class()(instance=self.instance)
        data = current_form_data(form)
        for name, value in attrs.items():
            if name in data:
                data[name] = self.form_value(name, value)
        bind(form, data)
        if not form.is_valid():
            raise serializers.ValidationError(form_errors(form))
        self._form = form
        return attrs

    def form_value(self, name: str, value: object) -> object:
        if isinstance(value, models.Model):
            return value.pk
        if isinstance(value, list | tuple):
            return [v.pk if isinstance(v, models.Model) else v for v in value]
        return value

    def create(self, validated_data: dict) -> models.Model:
        return self._save()

    def update(self, instance: models.Model, validated_data: dict) -> models.Model:
        return self._save()

    def saved_related(self) -> dict[str, list[models.Model]]:
        """The many-to-many values the form has just saved."""
        return saved_related(self._form)

    def _save(self) -> models.Model:
        # No savepoint of its own: every caller's transaction (the view's
        # audited save) ends with the error this raises.
        with transaction.atomic(savepoint=False):
            return self._form.save()
