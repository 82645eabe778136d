"""The ledger's invariants, held by the database itself.

PostgreSQL: every transaction sums to zero per currency (a deferred constraint trigger, checked at
COMMIT so that a posting may insert its legs one by one); entries and transactions are append-only;
an entry's currency is its account's (a composite foreign key); a resolved hold never changes again.
"""

from django.db import migrations

POSTGRES = """
CREATE FUNCTION ledger_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    off record;
BEGIN
    SELECT currency, sum(amount) AS total INTO off FROM ledger_entry
     WHERE transaction_id = NEW.transaction_id AND currency = NEW.currency
     GROUP BY currency HAVING sum(amount) <> 0;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % does not balance in %: debits and credits differ by %',
            NEW.transaction_id, off.currency, off.total USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER ledger_entry_balanced AFTER INSERT ON ledger_entry
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_entry_balanced();

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused; post a reversal instead', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END $$;

CREATE TRIGGER ledger_entry_append_only BEFORE UPDATE OR DELETE ON ledger_entry
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_transaction_append_only BEFORE UPDATE OR DELETE ON ledger_transaction
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

CREATE FUNCTION ledger_hold_resolve_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR OLD.status <> 'reserved'
       OR NEW.account_id <> OLD.account_id OR NEW.amount <> OLD.amount THEN
        RAISE EXCEPTION 'hold % is resolved or its terms are fixed: % refused', OLD.id, TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER ledger_hold_resolve_once BEFORE UPDATE OR DELETE ON ledger_hold
    FOR EACH ROW EXECUTE FUNCTION ledger_hold_resolve_once();

ALTER TABLE ledger_entry ADD CONSTRAINT ledger_entry_currency_is_account_currency
    FOREIGN KEY (account_id, currency) REFERENCES ledger_account (id, currency)
    DEFERRABLE INITIALLY IMMEDIATE;
"""


def install(apps, schema_editor):
    schema_editor.execute(POSTGRES, params=None)


class Migration(migrations.Migration):
    dependencies = [("ledger", "0001_initial")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
