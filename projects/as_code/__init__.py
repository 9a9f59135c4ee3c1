"""Projects as code: every project, tag, channel (without its secrets) and
maintenance window as one YAML file, exported and imported by name.

schema.py says what the file holds, export.py writes it, validation.py
reads it through the admin's own forms, plan.py computes what an import
would change, and apply.py makes those changes in one transaction. The
format is documented in docs/projects-as-code.md.
"""
