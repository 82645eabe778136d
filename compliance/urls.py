from django.urls import path

from compliance import views

app_name = "compliance"

brand = "brands/<slug:brand_slug>/"

urlpatterns = [
    path(brand + "compliance/", views.queue, name="queue"),
    path(brand + "compliance/cases/<int:case_id>/", views.case_decide, name="case_decide"),
    path(brand + "campaigns/<int:campaign_id>/compliance/", views.report, name="report"),
    path(brand + "campaigns/<int:campaign_id>/compliance.csv", views.report_csv, name="report_csv"),
]
