"""Payees paid by international transfer before the address was asked for: the provider refuses such
a transfer (counterpartyAddressRequired), so their details are marked as needing the address (BE04):
no payout is made for them, and their status page asks for new details, until they give it. The
rail is a plain column, so one short UPDATE of the few SWIFT payees does it (every one stored before
0021 has no address: the field is encrypted, so the SQL cannot read it, and need not)."""

from django.db import migrations

MARK = """
UPDATE payouts_payeeaccount SET unusable_code = 'BE04'
 WHERE rail = 'swift' AND replaced_at IS NULL AND unusable_code = ''
"""


class Migration(migrations.Migration):
    dependencies = [("payouts", "0021_payee_latin_name_and_address")]

    operations = [migrations.RunSQL(MARK, migrations.RunSQL.noop)]
