from django.apps import AppConfig


class JoyBackConfig(AppConfig):
    name = "joyback"
    verbose_name = "JoyBack"

    def ready(self):
        # deferred: ready() runs once every app's models are loaded
        from django.db.models.signals import post_migrate
        from django_q.signals import pre_enqueue, pre_execute

        # deferred: ready() runs once every app's models are loaded
        from joyback import deploy_checks  # noqa: F401 (registers manage.py check --deploy's checks)
        from joyback.observability import task_request_id_attach, task_request_id_restore
        from joyback.safety import production_refuse_unsafe
        from joyback.schedules import schedules_sync_after_migrate

        production_refuse_unsafe()
        pre_enqueue.connect(task_request_id_attach, dispatch_uid="joyback_request_id_attach")
        pre_execute.connect(task_request_id_restore, dispatch_uid="joyback_request_id_restore")
        # Once per migrate (sent for every app; this one's is enough), after every app's migrations.
        post_migrate.connect(schedules_sync_after_migrate, sender=self, dispatch_uid="joyback_schedules_sync")
