"""A person's tax identity and the rewards a tax authority is told about (docs/design.md, "Tax
classification"): the TIN checks per country (tins), the reads (selectors), the writes and the
hold on payouts until the details are given (services), and the person's form (views)."""
