"""JoyBack's settings, by concern; each layer reads the environment through config.env, where every
variable is declared once (config.variables). The test layer comes last, and only for
JOYBACK_ENV=test. Production with a required variable missing stops here, naming all of them;
what is set but unsafe (the sandbox, a published secret) is joyback.safety's to refuse."""

from config.settings.base import *  # noqa: F403
from config.settings.database import *  # noqa: F403
from config.settings.operations import *  # noqa: F403
from config.settings.payouts import *  # noqa: F403
from config.settings.providers import *  # noqa: F403
from config.settings.security import *  # noqa: F403
from config.settings.tasks import *  # noqa: F403

if JOYBACK_ENV == "test":  # noqa: F405
    from config.settings.test import *  # noqa: F403

env.refuse_missing()  # noqa: F405
