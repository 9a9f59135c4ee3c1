from django.dispatch import Signal

# Sent with `project_ids` after a bulk QuerySet.update() of projects, which
# sends no post_save; whoever follows project changes listens to this too.
projects_bulk_changed = Signal()
