"""`manage.py check --deploy`: what must hold once JoyBack runs on more than one machine.

Every web and worker machine is the same: none keeps state another needs, except in PostgreSQL,
Redis and the file storage. The folders on a machine's own disk are the exception to check: a
video a person uploads through one web machine is sent to TikTok by a worker on another, and the
bank's drop folder is read by whichever task worker runs the fetch."""

from django.conf import settings
from django.core import checks

LOCAL_STORAGE = "django.core.files.storage.FileSystemStorage"


@checks.register(checks.Tags.files, deploy=True)
def shared_files_check(app_configs=None, **kwargs):
    problems = []
    storage = settings.STORAGES.get("video_uploads", {})
    if storage.get("BACKEND") == LOCAL_STORAGE and not settings.SHARED_FOLDERS:
        problems.append(
            checks.Warning(
                f"Video uploads are kept in {storage.get('OPTIONS', {}).get('location')}, on this "
                "machine's disk.",
                hint="With more than one machine, set VIDEO_UPLOAD_STORAGE to object storage, or mount the "
                "folder on every web and worker machine and set SHARED_FOLDERS=1.",
                id="joyback.W001",
            )
        )
    if settings.BANK_DROP_FOLDER and not settings.SHARED_FOLDERS:
        problems.append(
            checks.Warning(
                f"The bank's drop folder {settings.BANK_DROP_FOLDER} is read by whichever task worker runs "
                "the fetch.",
                hint="Mount it on every worker machine and set SHARED_FOLDERS=1, or run the task cluster on "
                "one machine.",
                id="joyback.W002",
            )
        )
    return problems
