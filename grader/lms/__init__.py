"""What varies from one LMS to another, behind one interface (`adapter.LMS`), one module per LMS.

A download's layout and who each of its files belongs to, the gradebook the LMS exports and the
one written back, and any feedback bundle the LMS imports: `registry` lists the adapters, and the
engine (intake, passback, the CLI's --from) reaches an LMS only through it.
"""
