from django.conf import settings
from django.db import models


class Brand(models.Model):
    """The tenant: every brand-scoped row hangs off one of these."""

    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=60, unique=True)
    default_currency = models.CharField(max_length=3, default="EUR")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    FINANCE = "finance", "Finance"
    MARKETER = "marketer", "Marketer"
    VIEWER = "viewer", "Viewer"


class Membership(models.Model):
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=12, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["brand", "user"], name="campaigns_one_membership_per_brand")
        ]

    def __str__(self):
        return f"{self.user} is {self.role} of {self.brand}"
