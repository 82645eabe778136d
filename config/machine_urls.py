"""The machine endpoints' URLconf (settings.MACHINE_URLCONF): the paths the WSGI and ASGI
applications answer through the machine handler (joyback.machine), each app's own list mounted as
config.urls mounts it, under the same prefix and URL namespace, so that a path names the same view
by the same name either way. config.urls mounts these lists too, for every other way in."""

from django.urls import include, path

from payouts import urls as payouts_urls
from verification import api as verification_api
from verification import urls as verification_urls

urlpatterns = [
    path("api/v1/", include(verification_api.machine_urlpatterns)),
    path("", include((verification_urls.machine_urlpatterns, verification_urls.app_name))),
    path("", include((payouts_urls.machine_urlpatterns, payouts_urls.app_name))),
]
