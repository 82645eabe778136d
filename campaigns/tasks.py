"""Work the task queue runs for campaigns: thin wrappers that call one service each."""

from campaigns.services.invoices import invoices_issue


def invoices_issue_task() -> int:
    """The monthly invoices: every live brand's fees of the months before this one not invoiced yet."""
    return len(invoices_issue())
