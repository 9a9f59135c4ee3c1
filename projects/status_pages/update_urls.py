from django.urls import path

from projects.status_pages import updates

app_name = "status_updates"
urlpatterns = [
    path("<int:pk>/updates/", updates.post, name="post"),
]
