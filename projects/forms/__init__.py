"""The forms the admin, the API and the YAML import share: a project
(project.py) and a maintenance window (maintenance.py). One form, so the
three surfaces accept and refuse the same things with the same messages.

They sit above the models (a ModelForm needs its model), while the rules
the models apply themselves sit below them in projects/checks/: that is
why the forms are not in projects/checks/ (tests/rules/test_import_circles.py).
"""
