from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class UserManager(BaseUserManager):
    use_in_migrations = True

    def _create_user(self, email, password, **extra_fields):
        if not email:
            raise ValueError("A user needs an email address")
        user = self.model(email=self.normalize_email(email), **extra_fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", False)
        extra_fields.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra_fields)

    def create_superuser(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        return self._create_user(email, password, **extra_fields)


class User(AbstractUser):
    """A person who signs in: a brand member or an admin. People who claim rewards are not users."""

    username = None
    email = models.EmailField("email address", unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS = []

    objects = UserManager()

    class Meta:
        constraints = [models.UniqueConstraint(Lower("email"), name="users_user_email_ci_unique")]

    def __str__(self):
        return self.email


class AccessChangeKind(models.TextChoices):
    ACCOUNT = "account", _("account created")
    MEMBERSHIP = "membership", _("brand membership or role")
    STAFF = "staff", _("staff status")
    SUPERUSER = "superuser", _("superuser status")
    PERMISSION = "permission", _("permission")
    GROUP = "group", _("group")
    GRANT_REQUESTED = "grant_requested", _("money permission requested")
    GRANT_CONFIRMED = "grant_confirmed", _("money permission confirmed")
    LIMIT = "limit", _("limit change")
    FEE_PLAN = "fee_plan", _("fee plan change")
    CUSTODY_MOVE = "custody_move", _("custody move")


class AccessChange(models.Model):
    """Who gave whom which access, and when: one row per account made, membership or role given or
    changed, permission, group or status granted or taken away. Append-only (a database trigger
    refuses an update or a delete), written in the change's own transaction; the four-eyes rule
    (joyback.users.four_eyes) reads it to refuse an approver the proposer set up, or the reverse."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    subject = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=AccessChangeKind.choices)
    detail = models.CharField(max_length=200, blank=True, default="")
    brand_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["actor", "subject", "at"], name="users_access_pair_at")]

    def __str__(self):
        return f"{self.actor or 'nobody recorded'} -> {self.subject}: {self.kind} {self.detail}"


class StaffGrant(models.Model):
    """A money permission (or superuser status, or a group that carries one) one staff member asked
    to give someone: it takes effect only when a second staff member confirms it."""

    subject = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=AccessChangeKind.choices)
    value = models.CharField(max_length=150, help_text="app_label.codename, a group's name, or 'superuser'")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(default=timezone.now)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~Q(confirmed_by=models.F("requested_by")), name="users_grant_two_people"
            ),
            models.UniqueConstraint(
                fields=["subject", "kind", "value"],
                condition=Q(confirmed_at__isnull=True),
                name="users_grant_one_pending",
            ),
        ]

    def __str__(self):
        state = "confirmed" if self.confirmed_at else "pending"
        return f"{self.value} for {self.subject} ({state})"
