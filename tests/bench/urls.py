"""The product's URLconf plus the reference view: a hello world through the same middleware."""

from django.http import HttpResponse
from django.urls import path

from config.urls import handler404, handler500  # noqa: F401 - the product's error answers (503 in an outage)
from config.urls import urlpatterns as product_urlpatterns


def hello(request):
    return HttpResponse("Hello, world")


urlpatterns = [path("bench/hello/", hello, name="bench_hello"), *product_urlpatterns]
