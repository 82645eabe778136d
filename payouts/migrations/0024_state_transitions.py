"""The money rows' state machines, held by the database as the ledger's rules are: a payout, a
provider deposit, a statement import and a reconciliation exception may only be inserted in, and
move between, the states payouts.models.transitions declares; an UPDATE (the ORM's or raw SQL) that
makes any other move raises. One function serves every table: each trigger passes its allowed moves
("from>to", from empty on an insert) as arguments. A change to the table is a new migration with its
triggers made again (tests/payouts/test_state_transitions.py compares these with the table).

Creating a trigger takes a brief SHARE ROW EXCLUSIVE lock and reads no rows."""

from django.db import migrations

FUNCTION = """
CREATE FUNCTION payouts_state_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.status = OLD.status THEN
        RETURN NEW;
    END IF;
    IF NOT (COALESCE(OLD.status, '') || '>' || NEW.status) = ANY (TG_ARGV) THEN
        RAISE EXCEPTION '%: % -> % is not a declared transition', TG_TABLE_NAME,
            COALESCE(NULLIF(OLD.status, ''), '(new)'), NEW.status USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
"""

TRIGGERS = """
CREATE TRIGGER payouts_payout_transition BEFORE INSERT OR UPDATE OF status ON payouts_payout
    FOR EACH ROW EXECUTE FUNCTION payouts_state_transition(
        '>awaiting_approval',
        '>created',
        '>submitted',
        'accepted>rejected',
        'accepted>settled',
        'awaiting_approval>cancelled',
        'awaiting_approval>created',
        'created>cancelled',
        'created>payee_verified',
        'payee_verified>cancelled',
        'payee_verified>submitted',
        'settled>returned',
        'submitted>accepted',
        'submitted>payee_verified',
        'submitted>rejected',
        'submitted>settled',
        'submitted>unknown',
        'unknown>accepted',
        'unknown>payee_verified',
        'unknown>rejected',
        'unknown>settled');
CREATE TRIGGER payouts_providerdeposit_transition BEFORE INSERT OR UPDATE OF status ON payouts_providerdeposit
    FOR EACH ROW EXECUTE FUNCTION payouts_state_transition(
        '>received',
        'booked>returned',
        'received>booked',
        'received>returned');
CREATE TRIGGER payouts_statementimport_transition BEFORE INSERT OR UPDATE OF status ON payouts_statementimport
    FOR EACH ROW EXECUTE FUNCTION payouts_state_transition(
        '>awaiting',
        '>failed',
        '>queued',
        'awaiting>failed',
        'awaiting>queued',
        'queued>running',
        'running>done',
        'running>failed');
CREATE TRIGGER payouts_reconciliationexception_transition BEFORE INSERT OR UPDATE OF status ON payouts_reconciliationexception
    FOR EACH ROW EXECUTE FUNCTION payouts_state_transition(
        '>open',
        'open>resolved');
"""

UNDO = """
DROP TRIGGER payouts_payout_transition ON payouts_payout;
DROP TRIGGER payouts_providerdeposit_transition ON payouts_providerdeposit;
DROP TRIGGER payouts_statementimport_transition ON payouts_statementimport;
DROP TRIGGER payouts_reconciliationexception_transition ON payouts_reconciliationexception;
DROP FUNCTION payouts_state_transition();
"""


class Migration(migrations.Migration):
    dependencies = [("payouts", "0023_merge_provider_movements_and_payee_rails")]

    operations = [migrations.RunSQL(FUNCTION + TRIGGERS, UNDO)]
