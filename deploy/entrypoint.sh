#!/bin/sh
# The container's entrypoint: one image, three roles.
#
#   entrypoint.sh web        gunicorn (deploy/gunicorn.conf.py) on $PORT
#   entrypoint.sh worker     the task cluster (manage.py qcluster)
#   entrypoint.sh standing   the standing worker (manage.py work): stored webhooks and events
#   entrypoint.sh migrate    the migrations only (a release step), then exit
#   entrypoint.sh manage ... any manage.py command
#
# Every role first applies the migrations, one machine at a time (manage.py migrate_locked: a
# PostgreSQL advisory lock; the others wait, then find nothing to do), unless MIGRATE_ON_START=0
# (when a release step runs `migrate`). MIGRATE_DATABASE_URL names the primary itself when
# DATABASE_URL goes through a transaction-mode pooler, where a session lock would not hold.
# It refuses to start, before touching anything, when a setting production needs is missing.
set -eu

PYTHON="${PYTHON:-python}"
role="${1:-web}"
[ "$#" -gt 0 ] && shift

# What production refuses to start without, the same list as the settings' (config/variables.py),
# said before anything runs; JoyBack's own startup checks (joyback/safety.py) then refuse what is
# set but unsafe.
# BEGIN required (written by `python -m config.docs` from config/variables.py)
required="SITE_URL ALLOWED_HOSTS SECRET_KEY PAYEE_ENCRYPTION_KEYS PAYEE_FINGERPRINT_KEY DATABASE_URL ADYEN_API_KEY ADYEN_BALANCE_ACCOUNT_ID ADYEN_HMAC_KEYS PAYOUT_DEBTOR_IBAN INVOICE_ISSUER_ADDRESS INVOICE_ISSUER_VAT_ID"
# END required
sandbox="$(printf '%s' "${SANDBOX:-}" | tr '[:upper:]' '[:lower:]')"
case "$sandbox" in 1 | true | yes | on) sandbox=1 ;; *) sandbox=0 ;; esac
if [ "${JOYBACK_ENV:-production}" = "production" ]; then
    if [ "$sandbox" = "1" ]; then
        echo "joyback: refusing to start the $role role: SANDBOX is on in production (unset it)" >&2
        exit 78
    fi
    missing=""
    for name in $required; do
        eval "value=\${$name:-}"
        [ -n "$value" ] || missing="$missing $name"
    done
    if [ -n "$missing" ]; then
        echo "joyback: refusing to start the $role role: not set:$missing" >&2
        exit 78  # EX_CONFIG: systemd and orchestrators do not restart a misconfiguration in a loop
    fi
fi

migrate() {
    DATABASE_URL="${MIGRATE_DATABASE_URL:-$DATABASE_URL}" "$PYTHON" manage.py migrate_locked --no-input
}

case "$role" in
    web | worker | standing)
        if [ "${MIGRATE_ON_START:-1}" = "1" ]; then
            migrate
        fi
        ;;
esac

case "$role" in
    web) exec "$PYTHON" -m gunicorn -c deploy/gunicorn.conf.py config.wsgi "$@" ;;
    worker) exec "$PYTHON" manage.py qcluster "$@" ;;
    standing) exec "$PYTHON" manage.py work "$@" ;;
    migrate) migrate ;;
    manage) exec "$PYTHON" manage.py "$@" ;;
    *)
        echo "joyback: unknown role '$role' (web, worker, standing, migrate or manage)" >&2
        exit 64
        ;;
esac
