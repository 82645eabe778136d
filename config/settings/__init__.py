"""The settings (config.settings.base for now)."""

from config.settings.base import *  # noqa: F403
