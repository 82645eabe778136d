from django.urls import include, path

from compliance import views

app_name = "compliance"

brand_pages = [
    path("compliance/", views.queue, name="queue"),
    path("compliance/cases/<int:case_id>/", views.case_decide, name="case_decide"),
    path("campaigns/<int:campaign_id>/compliance/", views.report, name="report"),
    path("campaigns/<int:campaign_id>/rules/<int:rule_id>/appeal/", views.rule_appeal, name="rule_appeal"),
    path("campaigns/<int:campaign_id>/compliance.csv", views.report_csv, name="report_csv"),
]

urlpatterns = [path("brands/<slug:brand_slug>/", include(brand_pages))]
