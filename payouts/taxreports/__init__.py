"""The yearly tax reports a platform that pays people owes: the OECD DPI XML for DAC7 (EU) and for
HMRC (UK), the IRS's 1099-NEC file, and each person's own statement.

`records.py` holds the data the writers take (plain data classes, no database), `dpi.py`,
`fire.py` and `statement.py` write the files, `amounts.py` turns bank-confirmed payouts into
the paid amount of each reportable reward per person and quarter, `selectors.py` reads them from
the ledger and the payouts, `services.py` keeps the reports, their corrections and their filing.
"""
