from django.urls import path

from projects.status_pages import views

app_name = "status_pages"
urlpatterns = [
    path("<slug:slug>/", views.status_page, name="page"),
]
